# cassette: one Makefile.  Objects under build/ (build/san/ with SANITIZE=...).
#   make            build/cassette, build/cassette-tool, build/cassette-bench
#   make deps       install missing Debian packages and npm modules (no-op when present)
#   make run        deps + build + server on 127.0.0.1:9042, data in ./data
#   make test       deps + build + unit, integration and crash tests
#   make unit       criterion unit tests only
#   SANITIZE=address,undefined make ...   sanitizer build in build/san/
#   make fuzz       libFuzzer harnesses (clang) in build/fuzz/, docs/fuzzing.md
#   make fuzz-regress  their regression inputs, seeds and a short mutation run (also in `make test`)

CC ?= cc
SANITIZE ?=
BUILD ?= build
ifeq ($(SANITIZE),)
  B := $(BUILD)
  OPT ?= -O2
  SANFLAGS :=
else
  B := $(BUILD)/san
  OPT ?= -O1
  SANFLAGS := -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
endif

CFLAGS ?= $(OPT) -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-unused-parameter -I. -MMD -MP $(SANFLAGS) -pthread $(EXTRA_CFLAGS)
LDFLAGS += $(SANFLAGS) -pthread
LIBS := -luv -llz4 -lxxhash -lcrypt -lm -ldl   # libsnappy: dlopen'd on first use (server/snappy.h)

COMMON_SRC  := $(wildcard common/*.c)
STORAGE_SRC := $(wildcard storage/*.c)
CQL_SRC     := $(wildcard cql/*.c cql/types/*.c)
SERVER_SRC  := $(filter-out server/main.c,$(wildcard server/*.c))
TOOLS_SRC   := $(wildcard tools/*.c)
# cassette-bench; bench/storage_bench*.c is the separate engine benchmark (make storage-bench)
BENCH_SRC   := $(filter-out bench/storage_bench%.c,$(wildcard bench/*.c))
# RocksDB): built only by `make storage-bench`, never by `all`.
SBENCH_SRC  := $(wildcard bench/storage_bench*.c)
BENCH_SRC   := $(filter-out $(SBENCH_SRC),$(wildcard bench/*.c))

obj = $(patsubst %.c,$(B)/%.o,$(1))

LIB_COMMON  := $(B)/libcommon.a
LIB_STORAGE := $(B)/libstorage.a
LIB_CQL     := $(B)/libcql.a
LIB_SERVER  := $(B)/libserver.a

BINS := $(B)/cassette
ifneq ($(TOOLS_SRC),)
  BINS += $(B)/cassette-tool
endif
ifneq ($(filter bench/main.c,$(BENCH_SRC)),)
  BINS += $(B)/cassette-bench
endif

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

.PHONY: all deps run-deps run test unit integration crash clean check-layers lint-malloc bench-startup storage-bench \
        fuzz fuzz-regress
all: $(BINS)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB_COMMON): $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIB_STORAGE): $(call obj,$(STORAGE_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIB_CQL): $(call obj,$(CQL_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(LIB_SERVER): $(call obj,$(SERVER_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^

ALL_LIBS := $(LIB_SERVER) $(LIB_CQL) $(LIB_STORAGE) $(LIB_COMMON)

$(B)/cassette: $(B)/server/main.o $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/cassette-tool: $(call obj,$(TOOLS_SRC)) $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)
$(B)/cassette-bench: $(call obj,$(BENCH_SRC)) $(ALL_LIBS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lyaml

# Storage micro-benchmark vs LevelDB/RocksDB (docs/storage-bench.md).
# Needs libleveldb-dev and librocksdb-dev; not in `all`, `test` or BINS.
$(B)/cassette-storage-bench: $(call obj,$(SBENCH_SRC)) $(LIB_STORAGE) $(LIB_COMMON)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lleveldb -lrocksdb
storage-bench: $(B)/cassette-storage-bench

# Unit tests: tests/unit/test_<layer>_<name>.c links only its layer and below,
# so a layer's tests build while a higher layer is mid-change.
$(B)/tests/test_common_%: $(B)/tests/unit/test_common_%.o $(LIB_COMMON)
	@mkdir -p $(dir $@); $(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcriterion
$(B)/tests/test_storage_%: $(B)/tests/unit/test_storage_%.o $(LIB_STORAGE) $(LIB_COMMON)
	@mkdir -p $(dir $@); $(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcriterion
$(B)/tests/test_cql_%: $(B)/tests/unit/test_cql_%.o $(LIB_CQL) $(LIB_STORAGE) $(LIB_COMMON)
	@mkdir -p $(dir $@); $(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcriterion
$(B)/tests/test_server_%: $(B)/tests/unit/test_server_%.o $(ALL_LIBS)
	@mkdir -p $(dir $@); $(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lcriterion
# bench/ tests link the bench's objects but its main.
$(B)/tests/test_bench_%: $(B)/tests/unit/test_bench_%.o $(call obj,$(filter-out bench/main.c,$(BENCH_SRC))) $(ALL_LIBS)
	@mkdir -p $(dir $@); $(CC) $(LDFLAGS) -o $@ $^ $(LIBS) -lyaml -lcriterion

deps:
	@sh tests/deps.sh

run-deps:
	@sh tests/deps.sh run

run: run-deps all
	@mkdir -p data
	$(B)/cassette --listen 127.0.0.1 --port 9042 --data-dir ./data

unit: $(UNIT_BINS)
	@sh tests/run_unit.sh $(UNIT_BINS)

integration: all
	@sh tests/run_integration.sh $(B)/cassette

crash: all
	@sh tests/run_crash.sh $(B)/cassette

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BINS)
	@sh tests/run_all.sh $(B)

check-layers:
	@sh tests/check_layers.sh

lint-malloc:
	@! grep -nE '\b(malloc|calloc|realloc|free|strdup)\(' $(COMMON_SRC) $(STORAGE_SRC) $(CQL_SRC) $(SERVER_SRC) $(TOOLS_SRC) $(BENCH_SRC) $(SBENCH_SRC) server/main.c | grep -v 'common/alloc.c' | grep -v '/\* raw-ok' || (echo "raw allocation found (use cs_malloc)"; exit 1)

bench-startup: all
	sh bench/startup.sh $(B)/cassette

# Coverage-guided fuzzing (docs/fuzzing.md): tests/fuzz/fuzz_<name>.c, each
# with LLVMFuzzerTestOneInput, linked with libFuzzer, ASan and UBSan.  Every
# source is compiled again with clang into $(FZ)/obj (never mixed with the
# gcc objects), into the same four libraries.  Not part of `all`; `make test`
# builds them and runs tests/fuzz/regress.sh (tests/run_all.sh step 4).
FUZZ_CC ?= clang
FZ := $(BUILD)/fuzz
# Without pointer-overflow: its only reports were NULL + 0 (an empty
# buffer's end, cs_buf_extend(b, 0)), which gcc's UBSan (SANITIZE=) does not
# flag and C2y makes defined (N3322); ASan still catches any real
# out-of-bounds access.
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize=pointer-overflow -fno-sanitize-recover=all \
            -fno-omit-frame-pointer
# CONN_MAX_PENDING_OUT: server/conn.c stops reading a connection above 64 KiB
# of unsent replies instead of 16 MiB, so that fuzz_conn reaches it.
FUZZ_CFLAGS := -O1 -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I. -MMD -MP -pthread \
               -fsanitize=fuzzer-no-link $(FUZZ_SAN) -DCONN_MAX_PENDING_OUT=65536 $(EXTRA_CFLAGS)
FUZZ_SRC := $(filter-out tests/fuzz/fuzz_common.c,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FZ)/%,$(FUZZ_SRC))
fzobj = $(patsubst %.c,$(FZ)/obj/%.o,$(1))
FZ_LIBS := $(FZ)/libserver.a $(FZ)/libcql.a $(FZ)/libstorage.a $(FZ)/libcommon.a

$(FZ)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@
$(FZ)/libcommon.a: $(call fzobj,$(COMMON_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(FZ)/libstorage.a: $(call fzobj,$(STORAGE_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(FZ)/libcql.a: $(call fzobj,$(CQL_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(FZ)/libserver.a: $(call fzobj,$(SERVER_SRC))
	@mkdir -p $(dir $@); rm -f $@; ar rcs $@ $^
$(FZ)/fuzz_%: $(FZ)/obj/tests/fuzz/fuzz_%.o $(FZ)/obj/tests/fuzz/fuzz_common.o $(FZ_LIBS)
	$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SAN) -pthread -o $@ $^ $(LIBS)

fuzz: $(FUZZ_BINS)
.PRECIOUS: $(FZ)/obj/%.o

# Every harness over each regression input, its seed corpus, then
# FUZZ_MUTATE_S (3) seconds of mutation: about 30 s (tests/fuzz/regress.sh).
fuzz-regress: fuzz
	@sh tests/fuzz/regress.sh $(FZ)

clean:
	rm -rf build

-include $(shell find $(B) -name '*.d' 2>/dev/null)
