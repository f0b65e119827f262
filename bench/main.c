/*
 * main.c: cassette-bench command line.
 *   cassette-bench list
 *   cassette-bench run PROFILE|preset:NAME [options]
 *   cassette-bench compare PROFILE|preset:NAME ... [options]
 */
#include "bench/run.h"
#include "common/alloc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: cassette-bench list\n"
        "       cassette-bench run PROFILE|preset:NAME [options]\n"
        "       cassette-bench compare PROFILE|preset:NAME PROFILE|preset:NAME ... [options]\n"
        "\n"
        "PROFILE is a cassandra-stress user profile (YAML) or a cassette profile in the\n"
        "same spirit; preset:NAME is a built-in workload (see `cassette-bench list`).\n"
        "\n"
        "options:\n"
        "  -h, --host HOST        server address (default 127.0.0.1)\n"
        "  -p, --port PORT        native protocol port (default 9042)\n"
        "  -u USER, -pw PASS      credentials for PasswordAuthenticator\n"
        "  --duration D           measured duration, e.g. 30s, 2m, 500ms (default 10s)\n"
        "  -n OPS                 stop after OPS operations instead of a duration\n"
        "  --rate N/s             fixed rate (latency corrected for coordinated omission);\n"
        "                         default: max throughput\n"
        "  --warmup D             unrecorded warm-up (default 1s; 0 with -n)\n"
        "  --connections N        connections (default 4)\n"
        "  --concurrency N        requests in flight per connection (default 16)\n"
        "  --ops SPEC             operation ratios, e.g. insert=3,read=1 (or ops(...))\n"
        "  --pop SPEC             seed population, as cassandra-stress's -pop: seq=1..N or\n"
        "                         dist=DIST (default seq=1..N for inserts only, else\n"
        "                         dist=gaussian(1..N); N = -n or 1M)\n"
        "  --nodes N --vnodes N --rf N   simulated cluster (default 6, 16, 3)\n"
        "  --top N                hottest partitions to report (default 10)\n"
        "  --seed N               random seed (default fixed)\n"
        "  --json FILE            write the JSON report (- for stdout)\n"
        "  --html FILE            write a self-contained HTML report with plots\n"
        "  --quiet                no progress lines\n"
        "  --help                 this text and the workloads\n");
}

static void list_presets(FILE *f)
{
    int n;
    const bench_preset *p = bench_presets(&n);
    fprintf(f, "presets (run as preset:NAME):\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "  %-14s %s\n", p[i].name, p[i].summary);
}

/* "30s", "2m", "500ms", "1h", "10" (seconds). */
static double parse_duration(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (!strcmp(end, "ms")) return v / 1000;
    if (!strcmp(end, "m") || !strcmp(end, "min")) return v * 60;
    if (!strcmp(end, "h")) return v * 3600;
    if (!*end || !strcmp(end, "s")) return v;
    return -1;
}

static int load_profile(const char *spec, bench_profile *p, char *err, size_t errlen)
{
    if (!strncmp(spec, "preset:", 7)) {
        const bench_preset *ps = bench_preset_find(spec + 7);
        if (!ps) {
            snprintf(err, errlen, "unknown preset '%s' (see cassette-bench list)", spec + 7);
            return -1;
        }
        return bench_profile_load_text(ps->name, ps->yaml, p, err, errlen);
    }
    return bench_profile_load_file(spec, p, err, errlen);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        usage(stdout);
        printf("\n");
        list_presets(stdout);
        return 0;
    }
    if (!strcmp(cmd, "list")) {
        list_presets(stdout);
        return 0;
    }
    if (strcmp(cmd, "run") && strcmp(cmd, "compare")) {
        fprintf(stderr, "cassette-bench: unknown command '%s'\n", cmd);
        usage(stderr);
        return 2;
    }
    bench_opts o = { .host = "127.0.0.1", .port = 9042, .connections = 4, .concurrency = 16, .duration_s = 10,
                     .warmup_s = -1, .nodes = 6, .vnodes = 16, .rf = 3, .top = 10 };
    const char *json = NULL, *html = NULL;
    const char *specs[32];
    int n_specs = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED() do { if (!v) { fprintf(stderr, "cassette-bench: %s needs a value\n", a); return 2; } i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--host")) { NEED(); o.host = v; }
        else if (!strcmp(a, "-p") || !strcmp(a, "--port")) { NEED(); o.port = atoi(v); }
        else if (!strcmp(a, "-u")) { NEED(); o.user = v; }
        else if (!strcmp(a, "-pw")) { NEED(); o.pass = v; }
        else if (!strcmp(a, "--duration")) { NEED(); o.duration_s = parse_duration(v); }
        else if (!strcmp(a, "-n")) { NEED(); o.n_ops = atoll(v); }
        else if (!strcmp(a, "--rate")) { NEED(); o.rate = atof(v); }
        else if (!strcmp(a, "--warmup")) { NEED(); o.warmup_s = parse_duration(v); }
        else if (!strcmp(a, "--connections")) { NEED(); o.connections = atoi(v); }
        else if (!strcmp(a, "--concurrency")) { NEED(); o.concurrency = atoi(v); }
        else if (!strcmp(a, "--ops")) { NEED(); o.ops = v; }
        else if (!strcmp(a, "--pop")) { NEED(); o.pop = v; }
        else if (!strcmp(a, "--nodes")) { NEED(); o.nodes = atoi(v); }
        else if (!strcmp(a, "--vnodes")) { NEED(); o.vnodes = atoi(v); }
        else if (!strcmp(a, "--rf")) { NEED(); o.rf = atoi(v); }
        else if (!strcmp(a, "--top")) { NEED(); o.top = atoi(v); }
        else if (!strcmp(a, "--seed")) { NEED(); o.seed = strtoull(v, NULL, 10); }
        else if (!strcmp(a, "--json")) { NEED(); json = v; }
        else if (!strcmp(a, "--html")) { NEED(); html = v; }
        else if (!strcmp(a, "--quiet")) o.quiet = true;
        else if (!strcmp(a, "--help")) { usage(stdout); return 0; }
        else if (a[0] == '-' && a[1]) { fprintf(stderr, "cassette-bench: unknown option %s\n", a); return 2; }
        else if (n_specs < 32) specs[n_specs++] = a;
#undef NEED
    }
    if (o.duration_s < 0 || o.connections < 1 || o.concurrency < 1 || o.port <= 0 || o.rate < 0) {
        fprintf(stderr, "cassette-bench: bad option value\n");
        return 2;
    }
    if (o.warmup_s < 0)
        o.warmup_s = o.n_ops ? 0 : 1;
    if (n_specs == 0 || (!strcmp(cmd, "run") && n_specs != 1)) {
        fprintf(stderr, "cassette-bench: %s needs %s\n", cmd, !strcmp(cmd, "run") ? "one PROFILE" : "PROFILEs");
        return 2;
    }
    bench_result *results = cs_calloc((size_t)n_specs, sizeof(bench_result));
    bench_profile *profiles = cs_calloc((size_t)n_specs, sizeof(bench_profile));
    int rc = 0, done = 0;
    char err[1024];
    for (int s = 0; s < n_specs; s++) {
        if (load_profile(specs[s], &profiles[s], err, sizeof(err))) {
            fprintf(stderr, "cassette-bench: %s\n", err);
            rc = 1;
            break;
        }
        if (!o.quiet)
            fprintf(stderr, "cassette-bench: running %s against %s:%d\n", profiles[s].name, o.host, o.port);
        if (bench_run(&profiles[s], &o, &results[s], err, sizeof(err))) {
            fprintf(stderr, "cassette-bench: %s: %s\n", profiles[s].name, err);
            rc = 1;
            bench_result_destroy(&results[s]);
            break;
        }
        done++;
    }
    if (done) {
        bench_report_text(stdout, results, done, &o);
        if (json && bench_report_json(json, results, done, &o)) {
            fprintf(stderr, "cassette-bench: cannot write %s\n", json);
            rc = 1;
        }
        if (html && bench_report_html(html, results, done, &o)) {
            fprintf(stderr, "cassette-bench: cannot write %s\n", html);
            rc = 1;
        }
    }
    for (int s = 0; s < n_specs; s++) {
        if (s < done)
            bench_result_destroy(&results[s]);
        bench_profile_destroy(&profiles[s]);
    }
    cs_free(results);
    cs_free(profiles);
    return rc;
}
