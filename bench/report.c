/*
 * report.c: cassette-bench output for people (text on stdout) and scripts
 * (JSON; the shape is a contract: per scheme, per operation throughput and
 * latency percentiles, the latency of all operations merged, a `partitions`
 * object (of the writes and reads the server acknowledged: picture.h), a
 * `ring` object, a per-second timeline).  The HTML page is
 * bench/report_html.c.
 */
#include "bench/report_fmt.h"
#include "bench/run.h"
#include <stdio.h>
#include <string.h>

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void human_bytes(uint64_t b, char *out, size_t n) { bench_fmt_bytes((double)b, out, n); }

/* ------------------------------------------------------------ text */

void bench_report_text(FILE *f, bench_result *rs, int n, const bench_opts *o)
{
    for (int s = 0; s < n; s++) {
        bench_result *r = &rs[s];
        fprintf(f, "\n== scheme %s (%s)\n", r->scheme, r->table);
        if (r->description && *r->description)
            fprintf(f, "   %s\n", r->description);
        fprintf(f, "   %d host%s, token-aware routing%s\n", r->hosts, r->hosts == 1 ? "" : "s",
                r->hosts == 1 ? " (one node: every token is local)" : "");
        fprintf(f, "   %.1f s measured, %llu ops ok, %llu errors, %.0f ops/s%s\n", r->elapsed_s,
                (unsigned long long)r->total_ok, (unsigned long long)r->total_errors, r->throughput,
                r->target_rate > 0 ? " (fixed rate)" : " (max throughput)");
        fprintf(f, "   %-12s %10s %9s %9s %9s %9s %9s %8s\n", "op", "ops/s", "p50 ms", "p90 ms", "p99 ms",
                "p99.9 ms", "max ms", "errors");
        for (int i = 0; i < r->n_ops; i++) {
            bench_op_result *op = &r->ops[i];
            fprintf(f, "   %-12s %10.0f %9.3f %9.3f %9.3f %9.3f %9.3f %8llu\n", op->name, op->throughput,
                    ms(bench_hist_pct(&op->hist, 50)), ms(bench_hist_pct(&op->hist, 90)),
                    ms(bench_hist_pct(&op->hist, 99)), ms(bench_hist_pct(&op->hist, 99.9)), ms(op->hist.max_ns),
                    (unsigned long long)op->errors);
        }
        char b50[32], b99[32], bmax[32];
        human_bytes(r->parts.bytes_p50, b50, sizeof(b50));
        human_bytes(r->parts.bytes_p99, b99, sizeof(b99));
        human_bytes(r->parts.bytes_max, bmax, sizeof(bmax));
        fprintf(f, "   partitions written (acknowledged writes): %zu, %llu rows   rows/partition p50 %llu p99 %llu max %llu"
                   "   bytes p50 %s p99 %s max %s\n",
                r->parts.count, (unsigned long long)r->parts.rows_total, (unsigned long long)r->parts.rows_p50,
                (unsigned long long)r->parts.rows_p99,
                (unsigned long long)r->parts.rows_max, b50, b99, bmax);
        if (r->parts.n_top) {
            fprintf(f, "   hottest partitions (share of operations):\n");
            for (int i = 0; i < r->parts.n_top && i < 5; i++)
                fprintf(f, "     %5.1f%%  token %20lld  rows %6u  key %.40s\n",
                        r->parts.total_ops ? 100.0 * (double)r->parts.top[i].ops / (double)r->parts.total_ops : 0,
                        (long long)r->parts.top[i].token, r->parts.top[i].rows, r->top_keys[i]);
        }
        fprintf(f, "   simulated ring: %d nodes x %d vnodes, RF %d: busiest node %.2fx the mean (ops), %.2fx (rows)\n",
                r->ring_ops.nodes, r->ring_ops.vnodes, r->ring_ops.rf, r->ring_ops.max_over_mean,
                r->ring_rows.max_over_mean);
        for (int i = 0; i < r->n_errors; i++)
            fprintf(f, "   error   %6llu x %s\n", (unsigned long long)r->errors[i].count, r->errors[i].kind);
        for (int i = 0; i < r->n_warnings; i++)
            fprintf(f, "   warning %6llu x %s\n", (unsigned long long)r->warnings[i].count, r->warnings[i].kind);
    }
    if (n > 1) {
        fprintf(f, "\n== side by side\n   %-16s %10s %10s %10s %12s %10s\n", "scheme", "ops/s", "p99 ms",
                "partitions", "rows max", "hot node");
        for (int s = 0; s < n; s++) {
            bench_hist all;
            bench_hist_init(&all);
            for (int i = 0; i < rs[s].n_ops; i++)
                bench_hist_merge(&all, &rs[s].ops[i].hist);
            fprintf(f, "   %-16s %10.0f %10.3f %10zu %12llu %9.2fx\n", rs[s].scheme, rs[s].throughput,
                    ms(bench_hist_pct(&all, 99)), rs[s].parts.count, (unsigned long long)rs[s].parts.rows_max,
                    rs[s].ring_ops.max_over_mean);
        }
    }
}

/* ------------------------------------------------------------ JSON */

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_latency(FILE *f, const bench_hist *h)
{
    fprintf(f, "{\"p50\": %.4f, \"p90\": %.4f, \"p99\": %.4f, \"p999\": %.4f, \"max\": %.4f, \"mean\": %.4f}",
            ms(bench_hist_pct(h, 50)), ms(bench_hist_pct(h, 90)), ms(bench_hist_pct(h, 99)),
            ms(bench_hist_pct(h, 99.9)), ms(h->max_ns), h->n ? h->sum_ns / (double)h->n / 1e6 : 0.0);
}

int bench_report_json(const char *path, bench_result *rs, int n, const bench_opts *o)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    if (!f)
        return -1;
    fprintf(f, "{\"tool\": \"cassette-bench\", \"latency_unit\": \"ms\", \"target\": {\"host\": ");
    json_str(f, o->host);
    fprintf(f, ", \"port\": %d}, \"connections\": %d, \"concurrency\": %d, \"rate\": %.1f, \"schemes\": [", o->port,
            o->connections, o->concurrency, o->rate);
    for (int s = 0; s < n; s++) {
        bench_result *r = &rs[s];
        fprintf(f, "%s\n {\"scheme\": ", s ? "," : "");
        json_str(f, r->scheme);
        fprintf(f, ", \"table\": ");
        json_str(f, r->table);
        fprintf(f, ", \"description\": ");
        json_str(f, r->description);
        fprintf(f, ", \"hosts\": %d, \"routed_ops\": %llu", r->hosts, (unsigned long long)r->routed_ops);
        fprintf(f, ", \"elapsed_s\": %.3f, \"ops_ok\": %llu, \"errors\": %llu, \"throughput\": %.1f, \"operations\": {",
                r->elapsed_s, (unsigned long long)r->total_ok, (unsigned long long)r->total_errors, r->throughput);
        for (int i = 0; i < r->n_ops; i++) {
            fprintf(f, "%s\n   ", i ? "," : "");
            json_str(f, r->ops[i].name);
            fprintf(f, ": {\"ops\": %llu, \"errors\": %llu, \"rows\": %llu, \"throughput\": %.1f, \"latency_ms\": ",
                    (unsigned long long)r->ops[i].ok, (unsigned long long)r->ops[i].errors,
                    (unsigned long long)r->ops[i].rows, r->ops[i].throughput);
            json_latency(f, &r->ops[i].hist);
            fprintf(f, "}");
        }
        bench_hist all;
        bench_hist_init(&all);
        for (int i = 0; i < r->n_ops; i++)
            bench_hist_merge(&all, &r->ops[i].hist);
        fprintf(f, "},\n  \"latency_ms\": ");
        json_latency(f, &all);
        fprintf(f, ",\n  \"errors_by_kind\": {");
        for (int i = 0; i < r->n_errors; i++) {
            fprintf(f, "%s", i ? ", " : "");
            json_str(f, r->errors[i].kind);
            fprintf(f, ": %llu", (unsigned long long)r->errors[i].count);
        }
        fprintf(f, "}, \"warnings_by_kind\": {");
        for (int i = 0; i < r->n_warnings; i++) {
            fprintf(f, "%s", i ? ", " : "");
            json_str(f, r->warnings[i].kind);
            fprintf(f, ": %llu", (unsigned long long)r->warnings[i].count);
        }
        fprintf(f, "},\n  \"partitions\": {\"counts\": \"acknowledged\", \"count\": %zu, \"rows_total\": %llu, "
                   "\"rows\": {\"p50\": %llu, \"p99\": %llu, \"max\": %llu}, "
                   "\"bytes\": {\"p50\": %llu, \"p99\": %llu, \"max\": %llu}, \"total_ops\": %llu, \"top\": [",
                r->parts.count, (unsigned long long)r->parts.rows_total, (unsigned long long)r->parts.rows_p50,
                (unsigned long long)r->parts.rows_p99,
                (unsigned long long)r->parts.rows_max, (unsigned long long)r->parts.bytes_p50,
                (unsigned long long)r->parts.bytes_p99, (unsigned long long)r->parts.bytes_max,
                (unsigned long long)r->parts.total_ops);
        for (int i = 0; i < r->parts.n_top; i++) {
            part_stat *p = &r->parts.top[i];
            fprintf(f, "%s{\"key\": \"%s\", \"token\": %lld, \"rows\": %u, \"bytes\": %llu, \"ops\": %llu, \"share\": %.4f}",
                    i ? ", " : "", r->top_keys[i], (long long)p->token, p->rows, (unsigned long long)p->bytes,
                    (unsigned long long)p->ops, r->parts.total_ops ? (double)p->ops / (double)r->parts.total_ops : 0.0);
        }
        fprintf(f, "], \"rows_histogram_log2\": [");
        for (int i = 0; i < 40; i++)
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)r->size_hist_rows[i]);
        fprintf(f, "], \"bytes_histogram_log2\": [");
        for (int i = 0; i < 40; i++)
            fprintf(f, "%s%llu", i ? ", " : "", (unsigned long long)(r->size_hist_bytes ? r->size_hist_bytes[i] : 0));
        fprintf(f, "]},\n  \"ring\": {\"nodes\": %d, \"vnodes\": %d, \"rf\": %d, \"max_load\": %.1f, \"mean_load\": %.1f, "
                   "\"max_over_mean\": %.4f, \"load_unit\": \"ops\", \"rows_max_over_mean\": %.4f, \"node_load\": [",
                r->ring_ops.nodes, r->ring_ops.vnodes, r->ring_ops.rf, r->ring_ops.max_load, r->ring_ops.mean_load,
                r->ring_ops.max_over_mean, r->ring_rows.max_over_mean);
        for (int i = 0; i < r->ring_ops.nodes; i++)
            fprintf(f, "%s%.1f", i ? ", " : "", r->ring_ops.node_load ? r->ring_ops.node_load[i] : 0);
        fprintf(f, "]},\n  \"timeline\": [");
        for (int i = 0; i < r->n_ticks; i++)
            fprintf(f, "%s{\"t\": %.1f, \"ops_per_s\": %.1f, \"p50\": %.4f, \"p99\": %.4f}", i ? ", " : "",
                    r->ticks[i].t_s, r->ticks[i].ops_per_s, ms(r->ticks[i].p50_ns), ms(r->ticks[i].p99_ns));
        fprintf(f, "]}");
    }
    fprintf(f, "\n]}\n");
    if (f != stdout)
        fclose(f);
    return 0;
}
