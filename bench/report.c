/*
 * report.c: cassette-bench output.  Text for people, JSON for scripts (the
 * shape is a contract: per scheme, per operation throughput and latency
 * percentiles; a `partitions` object; a `ring` object), and a self-contained
 * HTML page with inline SVG: latency over time, partition size distribution
 * and per-node load, one column per scheme.
 */
#include "bench/run.h"
#include "common/alloc.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static double ms(uint64_t ns) { return (double)ns / 1e6; }

static void human_bytes(uint64_t b, char *out, size_t n)
{
    if (b >= 1ull << 30) snprintf(out, n, "%.1f GiB", (double)b / (1ull << 30));
    else if (b >= 1ull << 20) snprintf(out, n, "%.1f MiB", (double)b / (1ull << 20));
    else if (b >= 1024) snprintf(out, n, "%.1f KiB", (double)b / 1024);
    else snprintf(out, n, "%llu B", (unsigned long long)b);
}

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
        fprintf(f, "   partitions written: %zu   rows/partition p50 %llu p99 %llu max %llu   bytes p50 %s p99 %s max %s\n",
                r->parts.count, (unsigned long long)r->parts.rows_p50, (unsigned long long)r->parts.rows_p99,
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
        fprintf(f, "},\n  \"errors_by_kind\": {");
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
        fprintf(f, "},\n  \"partitions\": {\"count\": %zu, \"rows\": {\"p50\": %llu, \"p99\": %llu, \"max\": %llu}, "
                   "\"bytes\": {\"p50\": %llu, \"p99\": %llu, \"max\": %llu}, \"total_ops\": %llu, \"top\": [",
                r->parts.count, (unsigned long long)r->parts.rows_p50, (unsigned long long)r->parts.rows_p99,
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

/* ------------------------------------------------------------ HTML / SVG */

/* Text from profiles and server warnings, escaped for HTML. */
static void html_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

#define W 360
#define H 200
#define PAD 36

/* Axis label: 0.75, 42, 155k, 1.2M. */
static void short_num(double v, char *out, size_t n)
{
    if (v >= 1e6) snprintf(out, n, "%.1fM", v / 1e6);
    else if (v >= 1e4) snprintf(out, n, "%.0fk", v / 1e3);
    else snprintf(out, n, "%.3g", v);
}

static void svg_axes(FILE *f, const char *title, const char *ylabel, double ymax)
{
    char top[32];
    short_num(ymax, top, sizeof(top));
    fprintf(f, "<svg width='%d' height='%d' xmlns='http://www.w3.org/2000/svg' font-family='sans-serif' font-size='10'>\n",
            W, H);
    fprintf(f, "<text x='%d' y='12' font-weight='bold'>%s</text>\n", PAD, title);
    fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#333'/>", PAD, H - 20, W - 8, H - 20);
    fprintf(f, "<line x1='%d' y1='20' x2='%d' y2='%d' stroke='#333'/>\n", PAD, PAD, H - 20);
    fprintf(f, "<text x='%d' y='26' text-anchor='end'>%s</text><text x='%d' y='%d' text-anchor='end'>0</text>",
            PAD - 2, top, PAD - 2, H - 20);
    fprintf(f, "<text x='%d' y='30'>%s</text>\n", PAD + 4, ylabel);
}

static void svg_latency(FILE *f, const bench_result *r)
{
    double ymax = 0.001, tmax = 1;
    for (int i = 0; i < r->n_ticks; i++) {
        if (ms(r->ticks[i].p99_ns) > ymax) ymax = ms(r->ticks[i].p99_ns);
        if (r->ticks[i].t_s > tmax) tmax = r->ticks[i].t_s;
    }
    svg_axes(f, "latency over time (p50 blue, p99 red)", "ms", ymax);
    const char *colors[2] = { "#1f77b4", "#d62728" };
    for (int k = 0; k < 2; k++) {
        fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='", colors[k]);
        for (int i = 0; i < r->n_ticks; i++) {
            double v = ms(k ? r->ticks[i].p99_ns : r->ticks[i].p50_ns);
            fprintf(f, "%.1f,%.1f ", PAD + (W - PAD - 8) * r->ticks[i].t_s / tmax, (H - 20) - (H - 40) * v / ymax);
        }
        fprintf(f, "'/>\n");
    }
    fprintf(f, "<text x='%d' y='%d'>%.0f s</text></svg>\n", W - 40, H - 6, tmax);
}

static void svg_sizes(FILE *f, const bench_result *r)
{
    int last = 0;
    uint64_t ymax = 1;
    for (int i = 0; i < 40; i++)
        if (r->size_hist_rows[i]) {
            last = i;
            if (r->size_hist_rows[i] > ymax) ymax = r->size_hist_rows[i];
        }
    svg_axes(f, "partition sizes (partitions per rows bucket)", "partitions", (double)ymax);
    int nb = last + 1;
    double bw = (double)(W - PAD - 10) / nb;
    for (int i = 0; i < nb; i++) {
        double h = (double)(H - 40) * (double)r->size_hist_rows[i] / (double)ymax;
        fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#2ca02c'><title>%llu..%llu rows: %llu</title></rect>",
                PAD + i * bw + 1, (H - 20) - h, bw - 2, h, 1ull << i, (2ull << i) - 1,
                (unsigned long long)r->size_hist_rows[i]);
        if (nb <= 20 || i % 2 == 0)
            fprintf(f, "<text x='%.1f' y='%d' font-size='8'>%llu</text>", PAD + i * bw + 1, H - 8, 1ull << i);
    }
    fprintf(f, "\n</svg>\n");
}

static void svg_ring(FILE *f, const bench_result *r)
{
    const bench_ring_result *g = &r->ring_ops;
    double ymax = g->max_load > 0 ? g->max_load : 1;
    char title[128];
    snprintf(title, sizeof(title), "simulated load per node (ops), busiest %.2fx mean", g->max_over_mean);
    svg_axes(f, title, "ops", ymax);
    double bw = (double)(W - PAD - 10) / (g->nodes ? g->nodes : 1);
    for (int i = 0; i < g->nodes && g->node_load; i++) {
        double h = (H - 40) * g->node_load[i] / ymax;
        fprintf(f, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>", PAD + i * bw + 2, (H - 20) - h,
                bw - 4, h, g->node_load[i] == g->max_load ? "#d62728" : "#9467bd");
        fprintf(f, "<text x='%.1f' y='%d'>n%d</text>", PAD + i * bw + bw / 2 - 6, H - 8, i + 1);
    }
    double my = (H - 20) - (H - 40) * g->mean_load / ymax;
    fprintf(f, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#333' stroke-dasharray='4'/></svg>\n", PAD, my,
            W - 8, my);
}

int bench_report_html(const char *path, bench_result *rs, int n, const bench_opts *o)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "<!doctype html><html><head><meta charset='utf-8'><title>cassette-bench report</title>\n"
               "<style>body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}"
               "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}"
               ".cols{display:flex;flex-wrap:nowrap;gap:24px;overflow-x:auto}.col{flex:0 0 auto}h2{margin-bottom:4px}</style></head><body>\n");
    fprintf(f, "<h1>cassette-bench</h1><p>target %s:%d, %d connections x %d in flight, %s</p>\n", o->host, o->port,
            o->connections, o->concurrency, o->rate > 0 ? "fixed rate" : "max throughput");
    fprintf(f, "<table><tr><th>scheme</th><th>ops/s</th><th>p50 ms</th><th>p99 ms</th><th>partitions</th>"
               "<th>rows/partition p50</th><th>p99</th><th>max</th><th>busiest node / mean</th><th>errors</th><th>warnings</th></tr>\n");
    for (int s = 0; s < n; s++) {
        bench_hist all;
        bench_hist_init(&all);
        for (int i = 0; i < rs[s].n_ops; i++)
            bench_hist_merge(&all, &rs[s].ops[i].hist);
        uint64_t nw = 0;
        for (int i = 0; i < rs[s].n_warnings; i++)
            nw += rs[s].warnings[i].count;
        fprintf(f, "<tr><td style='text-align:left'>%s</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%zu</td>"
                   "<td>%llu</td><td>%llu</td><td>%llu</td><td>%.2fx</td><td>%llu</td><td>%llu</td></tr>\n",
                rs[s].scheme, rs[s].throughput, ms(bench_hist_pct(&all, 50)), ms(bench_hist_pct(&all, 99)),
                rs[s].parts.count, (unsigned long long)rs[s].parts.rows_p50, (unsigned long long)rs[s].parts.rows_p99,
                (unsigned long long)rs[s].parts.rows_max, rs[s].ring_ops.max_over_mean,
                (unsigned long long)rs[s].total_errors, (unsigned long long)nw);
    }
    fprintf(f, "</table>\n<div class='cols'>");
    for (int s = 0; s < n; s++) {
        bench_result *r = &rs[s];
        fprintf(f, "<div class='col'><h2>");
        html_text(f, r->scheme);
        fprintf(f, "</h2><p style='max-width:%dpx'>", W);
        html_text(f, r->description);
        fprintf(f, "</p>\n");
        svg_latency(f, r);
        fprintf(f, "<br>");
        svg_sizes(f, r);
        fprintf(f, "<br>");
        svg_ring(f, r);
        fprintf(f, "<table><tr><th>op</th><th>ops/s</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>");
        for (int i = 0; i < r->n_ops; i++)
            fprintf(f, "<tr><td style='text-align:left'>%s</td><td>%.0f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td></tr>",
                    r->ops[i].name, r->ops[i].throughput, ms(bench_hist_pct(&r->ops[i].hist, 50)),
                    ms(bench_hist_pct(&r->ops[i].hist, 90)), ms(bench_hist_pct(&r->ops[i].hist, 99)),
                    ms(bench_hist_pct(&r->ops[i].hist, 99.9)), ms(r->ops[i].hist.max_ns));
        fprintf(f, "</table><p>hottest partitions:</p><table><tr><th>share</th><th>rows</th><th>token</th></tr>");
        for (int i = 0; i < r->parts.n_top && i < 5; i++)
            fprintf(f, "<tr><td>%.1f%%</td><td>%u</td><td>%lld</td></tr>",
                    r->parts.total_ops ? 100.0 * (double)r->parts.top[i].ops / (double)r->parts.total_ops : 0,
                    r->parts.top[i].rows, (long long)r->parts.top[i].token);
        fprintf(f, "</table>");
        for (int i = 0; i < r->n_warnings; i++)
        {
            fprintf(f, "<p style='color:#a60;max-width:%dpx'>warning x%llu: ", W, (unsigned long long)r->warnings[i].count);
            html_text(f, r->warnings[i].kind);
            fprintf(f, "</p>");
        }
        fprintf(f, "</div>\n");
    }
    fprintf(f, "</div></body></html>\n");
    fclose(f);
    return 0;
}
