/*
 * report_html.c: the page `cassette-bench run|compare ... --html FILE`
 * writes.  One self-contained file: inline CSS and SVG, no script, no
 * external resource; well-formed XML throughout (so tests parse it with
 * xml.etree), readable in a 1400 px window and printable.
 *
 * Top to bottom:
 *   1. what ran: target, connections, mode, the simulated ring;
 *   2. the summary table, one row per scheme (summary_table): the best and
 *      worst value of each comparable column marked (td.best / td.worst),
 *      partition sizes over the limits of report_fmt.h flagged (td.over);
 *   3. findings: plain sentences computed from the same figures (findings),
 *      the problems first;
 *   4. comparison charts, every scheme on one set of axes, one colour per
 *      scheme, with a legend in each chart: latency and throughput over time,
 *      p99 by operation, partition sizes in rows and in bytes (log2 bins
 *      shared by all schemes, with the limits drawn), simulated per-node
 *      load over the mean, and the share of traffic of the top partitions;
 *   5. one detail column per scheme, its latency chart on the comparison
 *      chart's scale, its operations, hottest partitions, errors, warnings.
 *
 * Every number comes from the bench_result array; every string from a
 * profile or the server goes through esc().  What the tests read: each
 * chart is svg.chart with data-chart (the metric) and data-ymax (its axis
 * top); a comparison chart (svg.cmp) has g.legend > g.key[data-scheme];
 * each summary cell is td[data-col][data-v] (data-v: the figure as the JSON
 * prints it).
 */
#include "bench/report_fmt.h"
#include "bench/run.h"
#include "common/alloc.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double ms(uint64_t ns) { return (double)ns / 1e6; }

/* ------------------------------------------------------------ escaping */

/* Bytes of the UTF-8 sequence starting at s (1..4), or 0 if it is not a
 * valid, shortest-form sequence of a character XML allows. */
static int utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' ? 1 : 0;
    int n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (!n || (n == 3 && c >= 0xF0))
        return 0;
    unsigned cp = c & (0x3F >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF) || cp >= 0xFFFE)) ||
        (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return n;
}

/* Write s as HTML/XML text or attribute value: markup characters as
 * entities, bytes that are not valid UTF-8 (or characters XML forbids) as
 * U+FFFD; at most max_chars characters (0: all), then an ellipsis. */
static void escn(FILE *f, const char *s, int max_chars)
{
    int chars = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        if (max_chars && chars == max_chars) {
            fputs("\xe2\x80\xa6", f);
            return;
        }
        chars++;
        int n = utf8_len(p);
        if (!n) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        switch (*p) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fwrite(p, 1, (size_t)n, f);
        }
        p += n;
    }
}

static void esc(FILE *f, const char *s) { escn(f, s, 0); }

/* ------------------------------------------------------------ figures */

/* What the page shows of one scheme, computed once. */
typedef struct fig {
    const bench_result *r;
    double p50, p99, p999, pmax; /* ms, every operation merged */
    uint64_t warnings;           /* client warnings, all kinds */
    double hot_share;            /* hottest partition's ops / ops on all partitions */
    double node_ratio;           /* busiest simulated node / mean (ops) */
    int over_max, over_p99;      /* bench_part_over() of the largest / p99 partition */
    const char *color;           /* the scheme's colour in every chart */
} fig;

/* Okabe-Ito, colour-blind safe, without its yellow (unreadable on white). */
static const char *const palette[] = { "#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                       "#56B4E9", "#D55E00", "#555555", "#8C6D31" };

static void figs_compute(fig *g, const bench_result *rs, int n)
{
    for (int s = 0; s < n; s++) {
        const bench_result *r = &rs[s];
        fig *x = &g[s];
        memset(x, 0, sizeof(*x));
        x->r = r;
        bench_hist all;
        bench_hist_init(&all);
        for (int i = 0; i < r->n_ops; i++)
            bench_hist_merge(&all, &r->ops[i].hist);
        x->p50 = ms(bench_hist_pct(&all, 50));
        x->p99 = ms(bench_hist_pct(&all, 99));
        x->p999 = ms(bench_hist_pct(&all, 99.9));
        x->pmax = ms(all.max_ns);
        for (int i = 0; i < r->n_warnings; i++)
            x->warnings += r->warnings[i].count;
        if (r->parts.n_top && r->parts.total_ops)
            x->hot_share = (double)r->parts.top[0].ops / (double)r->parts.total_ops;
        x->node_ratio = r->ring_ops.max_over_mean;
        x->over_max = bench_part_over(r->parts.rows_max, r->parts.bytes_max);
        x->over_p99 = bench_part_over(r->parts.rows_p99, r->parts.bytes_p99);
        x->color = palette[s % (int)(sizeof(palette) / sizeof(palette[0]))];
    }
}

/* ------------------------------------------------------------ summary table */

enum { K_SI, K_MS, K_COUNT, K_BYTES, K_PCT, K_RATIO };

typedef struct column {
    const char *id;   /* td data-col */
    const char *head; /* second header row */
    int better;       /* +1 higher is better, -1 lower, 0 not marked */
    int kind;         /* K_*: how the value reads and how data-v prints */
} column;

enum {
    C_OPS,
    C_P50,
    C_P99,
    C_P999,
    C_ERR,
    C_WARN,
    C_PARTS,
    C_RP50,
    C_RP99,
    C_RMAX,
    C_BP50,
    C_BP99,
    C_BMAX,
    C_HOT,
    C_NODE,
    N_COLS
};

static const column cols[N_COLS] = {
    [C_OPS] = { "ops_s", "ops/s", +1, K_SI },
    [C_P50] = { "p50_ms", "p50", -1, K_MS },
    [C_P99] = { "p99_ms", "p99", -1, K_MS },
    [C_P999] = { "p999_ms", "p99.9", -1, K_MS },
    [C_ERR] = { "errors", "errors", -1, K_COUNT },
    [C_WARN] = { "warnings", "warnings", -1, K_COUNT },
    [C_PARTS] = { "partitions", "partitions", 0, K_COUNT },
    [C_RP50] = { "rows_p50", "p50", 0, K_COUNT },
    [C_RP99] = { "rows_p99", "p99", -1, K_COUNT },
    [C_RMAX] = { "rows_max", "max", -1, K_COUNT },
    [C_BP50] = { "bytes_p50", "p50", 0, K_BYTES },
    [C_BP99] = { "bytes_p99", "p99", -1, K_BYTES },
    [C_BMAX] = { "bytes_max", "max", -1, K_BYTES },
    [C_HOT] = { "hot_share", "hottest partition, share of ops", -1, K_PCT },
    [C_NODE] = { "node_ratio", "busiest node / mean", -1, K_RATIO },
};

static double colv(const fig *g, int c)
{
    const bench_result *r = g->r;
    switch (c) {
    case C_OPS: return r->throughput;
    case C_P50: return g->p50;
    case C_P99: return g->p99;
    case C_P999: return g->p999;
    case C_ERR: return (double)r->total_errors;
    case C_WARN: return (double)g->warnings;
    case C_PARTS: return (double)r->parts.count;
    case C_RP50: return (double)r->parts.rows_p50;
    case C_RP99: return (double)r->parts.rows_p99;
    case C_RMAX: return (double)r->parts.rows_max;
    case C_BP50: return (double)r->parts.bytes_p50;
    case C_BP99: return (double)r->parts.bytes_p99;
    case C_BMAX: return (double)r->parts.bytes_max;
    case C_HOT: return g->hot_share;
    case C_NODE: return g->node_ratio;
    }
    return 0;
}

/* v as the column reads: 40.8k, 4.33 ms, 1,881, 44.1 KiB, 0.51%, 1.17x. */
static char *col_text(int kind, double v, char *out, size_t n)
{
    switch (kind) {
    case K_SI: return bench_fmt_si(v, out, n);
    case K_MS: return bench_fmt_ms(v, out, n);
    case K_COUNT: return bench_fmt_count((uint64_t)v, out, n);
    case K_BYTES: return bench_fmt_bytes(v, out, n);
    case K_PCT: {
        char num[32];
        snprintf(out, n, "%s%%", bench_fmt_si(v * 100, num, sizeof(num)));
        return out;
    }
    default: return bench_fmt_ratio(v, out, n);
    }
}

/* The printf format of a column's figure at the JSON's precision (the
 * tests compare the two). */
static const char *col_fmt(int kind)
{
    switch (kind) {
    case K_SI: return "%.1f";
    case K_COUNT:
    case K_BYTES: return "%.0f";
    default: return "%.4f";
    }
}

static void col_data(FILE *f, int kind, double v)
{
    fprintf(f, col_fmt(kind), v);
}

/* v as col_data writes it: schemes whose published figures are equal are
 * marked alike (14999.14 and 14999.06 ops/s both read 14999.1). */
static double col_shown(int kind, double v)
{
    char t[64];
    snprintf(t, sizeof(t), col_fmt(kind), v);
    return strtod(t, NULL);
}

/* Which limit (BENCH_OVER_*) a summary cell's value exceeds. */
static int col_over(const fig *g, int c)
{
    const bench_part_summary *p = &g->r->parts;
    switch (c) {
    case C_RP99: return bench_part_over(p->rows_p99, 0);
    case C_RMAX: return bench_part_over(p->rows_max, 0);
    case C_BP99: return bench_part_over(0, p->bytes_p99);
    case C_BMAX: return bench_part_over(0, p->bytes_max);
    }
    return 0;
}

static void swatch(FILE *f, const char *color)
{
    fprintf(f, "<span class='sw' style='background:%s'></span>", color);
}

static void summary_table(FILE *f, const fig *g, int n)
{
    /* the best and worst of each marked column, where the schemes differ */
    double lo[N_COLS], hi[N_COLS];
    for (int c = 0; c < N_COLS; c++) {
        lo[c] = hi[c] = n ? col_shown(cols[c].kind, colv(&g[0], c)) : 0;
        for (int s = 1; s < n; s++) {
            double v = col_shown(cols[c].kind, colv(&g[s], c));
            lo[c] = v < lo[c] ? v : lo[c];
            hi[c] = v > hi[c] ? v : hi[c];
        }
    }
    fputs(
        "<table class='summary'>\n<thead><tr><th rowspan='2' class='l'>scheme</th><th rowspan='2'>ops/s</th>"
        "<th colspan='3'>latency, all operations</th><th rowspan='2'>errors</th><th rowspan='2'>warnings</th>"
        "<th rowspan='2'>partitions</th><th colspan='3'>rows per partition</th>"
        "<th colspan='3'>bytes per partition</th><th rowspan='2'>hottest partition, share of ops</th>"
        "<th rowspan='2'>busiest node / mean</th></tr>\n<tr>",
        f);
    for (int c = C_P50; c <= C_BMAX; c++)
        if (c != C_ERR && c != C_WARN && c != C_PARTS)
            fprintf(f, "<th>%s</th>", cols[c].head);
    fputs("</tr></thead>\n<tbody>\n", f);
    for (int s = 0; s < n; s++) {
        fprintf(f, "<tr data-scheme='");
        esc(f, g[s].r->scheme);
        fputs("'><td class='l'>", f);
        swatch(f, g[s].color);
        esc(f, g[s].r->scheme);
        fputs("</td>", f);
        for (int c = 0; c < N_COLS; c++) {
            double v = colv(&g[s], c), shown = col_shown(cols[c].kind, v);
            const char *cls = "";
            if (n > 1 && cols[c].better && lo[c] != hi[c]) {
                double best = cols[c].better > 0 ? hi[c] : lo[c], worst = cols[c].better > 0 ? lo[c] : hi[c];
                cls = shown == best ? "best" : shown == worst ? "worst" : "";
            }
            int over = col_over(&g[s], c);
            char text[48];
            fprintf(f, "<td data-col='%s' data-v='", cols[c].id);
            col_data(f, cols[c].kind, v);
            fprintf(f, "'%s%s%s%s%s>%s%s</td>", *cls || over ? " class='" : "", cls, *cls && over ? " " : "",
                    over ? "over" : "", *cls || over ? "'" : "",
                    col_text(cols[c].kind, v, text, sizeof(text)), over ? " !" : "");
        }
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n<p class='keys'>", f);
    if (n > 1)
        fputs(
            "<span class='best'>best</span> and <span class='worst'>worst</span> of each column where the "
            "schemes differ (higher is better for ops/s, lower for the others; partition count and p50 sizes "
            "are not marked). ",
            f);
    char rows[32], bytes[32];
    fprintf(f,
            "<span class='over'>over a limit !</span> more than %s rows or %s in one partition. "
            "Latency over every operation of the scheme, from each op's intended start with --rate. "
            "Partitions, rows and bytes count the writes the server acknowledged (refused, failed and "
            "timed-out writes count only under errors). "
            "Bytes: the values written (keys included), not the size on disk.</p>\n",
            bench_fmt_count(BENCH_LARGE_PARTITION_ROWS, rows, sizeof(rows)),
            bench_fmt_bytes((double)BENCH_LARGE_PARTITION_BYTES, bytes, sizeof(bytes)));
}

/* ------------------------------------------------------------ findings */

enum { SEV_BAD, SEV_WARN, SEV_INFO };
static const char *const sev_class[] = { "bad", "warn", "info" };

/* Index of the scheme with the highest (sign > 0) or lowest value of
 * column c; ties go to the first. */
static int arg_ext(const fig *g, int n, int c, int sign)
{
    int k = 0;
    for (int s = 1; s < n; s++)
        if (sign > 0 ? colv(&g[s], c) > colv(&g[k], c) : colv(&g[s], c) < colv(&g[k], c))
            k = s;
    return k;
}

static void li_open(FILE *f, int sev, const char *id, const fig *g)
{
    fprintf(f, "<li class='%s' data-finding='%s'", sev_class[sev], id);
    if (g) {
        fputs(" data-scheme='", f);
        esc(f, g->r->scheme);
        fputs("'>", f);
        swatch(f, g->color);
        fputs("<b>", f);
        esc(f, g->r->scheme);
        fputs("</b>: ", f);
    } else
        fputs(">", f);
}

/* The most frequent kind in a list (errors or warnings). */
static const bench_kind_count *top_kind(const bench_kind_count *k, int n)
{
    const bench_kind_count *t = NULL;
    for (int i = 0; i < n; i++)
        if (!t || k[i].count > t->count)
            t = &k[i];
    return t;
}

/* Every finding whose severity is sev: called once per severity, so that
 * the problems come first. */
static void findings_of(FILE *f, const fig *g, int n, const bench_opts *o, int sev)
{
    char a[48], b[48], c[48], d[48], e[48];
    /* partitions over the limits */
    for (int s = 0; s < n && sev == SEV_BAD; s++) {
        const bench_part_summary *p = &g[s].r->parts;
        if (!g[s].over_max)
            continue;
        li_open(f, SEV_BAD, "over_limit", &g[s]);
        fprintf(f, "largest partition %s row%s / %s, above ", bench_fmt_count(p->rows_max, a, sizeof(a)),
                p->rows_max == 1 ? "" : "s", bench_fmt_bytes((double)p->bytes_max, b, sizeof(b)));
        if (g[s].over_max & BENCH_OVER_ROWS)
            fprintf(f, "the ~%s rows per partition guidance%s",
                    bench_fmt_si(BENCH_LARGE_PARTITION_ROWS, c, sizeof(c)),
                    g[s].over_max & BENCH_OVER_BYTES ? " and " : "");
        if (g[s].over_max & BENCH_OVER_BYTES)
            fprintf(f,
                    "Cassandra's %s large-partition warning threshold "
                    "(compaction_large_partition_warning_threshold)",
                    bench_fmt_bytes((double)BENCH_LARGE_PARTITION_BYTES, c, sizeof(c)));
        if (g[s].over_p99)
            fputs("; at least 1% of its partitions are over too", f);
        fputs(".</li>\n", f);
    }
    /* errors */
    for (int s = 0; s < n && sev == SEV_BAD; s++) {
        const bench_result *r = g[s].r;
        if (!r->total_errors)
            continue;
        const bench_kind_count *k = top_kind(r->errors, r->n_errors);
        li_open(f, SEV_BAD, "errors", &g[s]);
        fprintf(f, "%s errors, %s%% of its requests", bench_fmt_count(r->total_errors, a, sizeof(a)),
                bench_fmt_si(100.0 * (double)r->total_errors / (double)(r->total_errors + r->total_ok), b,
                             sizeof(b)));
        if (k) {
            fprintf(f, "; most frequent (%s): <q>", bench_fmt_count(k->count, c, sizeof(c)));
            escn(f, k->kind, 160);
            fputs("</q>", f);
        }
        fputs(".</li>\n", f);
    }
    if (!n)
        return;
    /* fixed rate not kept */
    for (int s = 0; s < n && o->rate > 0 && sev == SEV_WARN; s++) {
        if (g[s].r->throughput >= 0.95 * o->rate)
            continue;
        li_open(f, SEV_WARN, "rate_missed", &g[s]);
        fprintf(f, "did not keep up with the fixed rate: %s of %s ops/s.</li>\n",
                bench_fmt_si(g[s].r->throughput, a, sizeof(a)), bench_fmt_si(o->rate, b, sizeof(b)));
    }
    /* the largest partition */
    int wr = arg_ext(g, n, C_RMAX, +1), br = arg_ext(g, n, C_RMAX, -1);
    for (int s = 0; s < n; s++) /* ties on rows: the larger in bytes */
        if (colv(&g[s], C_RMAX) == colv(&g[wr], C_RMAX) && colv(&g[s], C_BMAX) > colv(&g[wr], C_BMAX))
            wr = s;
    const bench_part_summary *pw = &g[wr].r->parts, *pb = &g[br].r->parts;
    double rr = pb->rows_max ? (double)pw->rows_max / (double)pb->rows_max : 0;
    double room_rows = pw->rows_max ? (double)BENCH_LARGE_PARTITION_ROWS / (double)pw->rows_max : INFINITY;
    double room_bytes =
        pw->bytes_max ? (double)BENCH_LARGE_PARTITION_BYTES / (double)pw->bytes_max : INFINITY;
    double room = room_rows < room_bytes ? room_rows : room_bytes;
    int s_size = g[wr].over_max ? SEV_BAD : n > 1 && rr >= 2 ? SEV_WARN : SEV_INFO;
    if (pw->rows_max && s_size == sev && !g[wr].over_max) {
        li_open(f, sev, "largest_partition", &g[wr]);
        fprintf(f, "largest partition %s row%s / %s", bench_fmt_count(pw->rows_max, a, sizeof(a)),
                pw->rows_max == 1 ? "" : "s", bench_fmt_bytes((double)pw->bytes_max, b, sizeof(b)));
        if (n > 1 && rr > 1) {
            fprintf(f, ", %s ", bench_fmt_ratio(rr, c, sizeof(c)));
            esc(f, g[br].r->scheme);
            fprintf(f, "&#8217;s largest (%s row%s / %s)", bench_fmt_count(pb->rows_max, d, sizeof(d)),
                    pb->rows_max == 1 ? "" : "s", bench_fmt_bytes((double)pb->bytes_max, e, sizeof(e)));
        } else if (n > 1)
            fputs(", as large as every other scheme's", f);
        fprintf(f, "; %s below the nearer limit (%s rows, %s per partition).</li>\n",
                bench_fmt_ratio(room, c, sizeof(c)), bench_fmt_si(BENCH_LARGE_PARTITION_ROWS, d, sizeof(d)),
                bench_fmt_bytes((double)BENCH_LARGE_PARTITION_BYTES, e, sizeof(e)));
    }
    /* the worst tail */
    int wt = arg_ext(g, n, C_P99, +1), bt = arg_ext(g, n, C_P99, -1);
    double tr = g[bt].p99 > 0 ? g[wt].p99 / g[bt].p99 : 0;
    if ((n > 1 && tr >= 2 ? SEV_WARN : SEV_INFO) == sev && g[wt].r->total_ok) {
        li_open(f, sev, "worst_tail", &g[wt]);
        fprintf(f, "%s p99 %s, p99.9 %s, max %s", n > 1 ? "worst tail:" : "latency",
                bench_fmt_ms(g[wt].p99, a, sizeof(a)), bench_fmt_ms(g[wt].p999, b, sizeof(b)),
                bench_fmt_ms(g[wt].pmax, c, sizeof(c)));
        if (n > 1 && tr >= 1.1) {
            fprintf(f, "; p99 %s ", bench_fmt_ratio(tr, d, sizeof(d)));
            esc(f, g[bt].r->scheme);
            fprintf(f, "&#8217;s (%s)", bench_fmt_ms(g[bt].p99, e, sizeof(e)));
        } else if (n > 1)
            fputs("; every scheme's p99 within 10% of it", f);
        fputs(".</li>\n", f);
    }
    /* throughput (max-throughput runs: at a fixed rate it is the rate) */
    int wo = arg_ext(g, n, C_OPS, -1), bo = arg_ext(g, n, C_OPS, +1);
    double orat = g[wo].r->throughput > 0 ? g[bo].r->throughput / g[wo].r->throughput : 0;
    if (o->rate <= 0 && sev == SEV_INFO && (n == 1 || orat > 1)) {
        li_open(f, sev, "throughput", &g[bo]);
        fprintf(f, "%s %s ops/s", n > 1 ? "most operations:" : "throughput",
                bench_fmt_si(g[bo].r->throughput, a, sizeof(a)));
        if (n > 1 && orat < 1.1)
            fputs(", every scheme within 10% of it", f);
        else if (n > 1) {
            fprintf(f, ", %s ", bench_fmt_ratio(orat, b, sizeof(b)));
            esc(f, g[wo].r->scheme);
            fprintf(f, "&#8217;s %s ops/s", bench_fmt_si(g[wo].r->throughput, c, sizeof(c)));
        }
        fputs(".</li>\n", f);
    }
    /* the hottest partition, against an even spread over the scheme's partitions */
    int wh = arg_ext(g, n, C_HOT, +1);
    const bench_result *rh = g[wh].r;
    double even = rh->parts.count ? 1.0 / (double)rh->parts.count : 0;
    double hx = even > 0 ? g[wh].hot_share / even : 0;
    if (g[wh].hot_share > 0 && (g[wh].hot_share >= 0.1 || hx >= 10 ? SEV_WARN : SEV_INFO) == sev) {
        li_open(f, sev, "hot_partition", &g[wh]);
        fprintf(f, "%s partition takes %s%% of all operations",
                n > 1 ? "hottest partition of all schemes: one" : "its hottest",
                bench_fmt_si(100 * g[wh].hot_share, a, sizeof(a)));
        if (rh->parts.count > 1)
            fprintf(f, ", %s an even share over its %s partitions (%s%%)", bench_fmt_ratio(hx, b, sizeof(b)),
                    bench_fmt_count(rh->parts.count, c, sizeof(c)), bench_fmt_si(100 * even, d, sizeof(d)));
        fputs(".</li>\n", f);
    }
    /* the simulated ring */
    int wn = arg_ext(g, n, C_NODE, +1);
    const bench_ring_result *ring = &g[wn].r->ring_ops;
    int s_ring = g[wn].node_ratio >= 2 ? SEV_BAD : g[wn].node_ratio >= 1.5 ? SEV_WARN : SEV_INFO;
    if (ring->nodes && g[wn].node_ratio > 0 && s_ring == sev) {
        li_open(f, sev, "busiest_node", &g[wn]);
        fprintf(f, "%s simulated node carries %s the mean load (%d nodes, %d vnodes each, RF %d)",
                n > 1 ? "most uneven ring: its busiest" : "the busiest",
                bench_fmt_ratio(g[wn].node_ratio, a, sizeof(a)), ring->nodes, ring->vnodes, ring->rf);
        fputs(".</li>\n", f);
    }
    /* warnings */
    for (int s = 0; s < n && sev == SEV_WARN; s++) {
        const bench_result *r = g[s].r;
        const bench_kind_count *k = top_kind(r->warnings, r->n_warnings);
        if (!k)
            continue;
        li_open(f, SEV_WARN, "warnings", &g[s]);
        fprintf(f, "%s warnings from the server; most frequent (%s): <q>",
                bench_fmt_count(g[s].warnings, a, sizeof(a)), bench_fmt_count(k->count, b, sizeof(b)));
        escn(f, k->kind, 160);
        fputs("</q>.</li>\n", f);
    }
}

static void findings(FILE *f, const fig *g, int n, const bench_opts *o)
{
    fputs("<ul class='findings'>\n", f);
    for (int sev = SEV_BAD; sev <= SEV_INFO; sev++)
        findings_of(f, g, n, o, sev);
    fputs("</ul>\n", f);
}

/* ------------------------------------------------------------ chart frame */

#define CW 660 /* comparison chart width (viewBox units = px at 100%) */
#define CH 300
#define DW 440 /* detail chart */
#define DH 220
#define ML 62 /* left margin: tick labels and the y title */
#define MR 14
#define MB 44 /* bottom margin: tick labels and the x title */

typedef struct chart {
    FILE *f;
    double x0, x1, y0, y1; /* plot area: left, right, top, bottom */
    bench_axis ya;
} chart;

static double ypx(const chart *c, double v)
{
    double y = c->y1 - (c->y1 - c->y0) * v / c->ya.max;
    return y < c->y0 ? c->y0 : y > c->y1 ? c->y1 : y;
}

/* One legend entry: its label and how its swatch is drawn. */
typedef struct legend_key {
    const char *label;
    const char *color;
    const char *dash;   /* stroke-dasharray of a line key, NULL for a box */
    const char *scheme; /* data-scheme, or NULL */
} legend_key;

/* Open an svg.chart: title, a wrapped legend, y grid, ticks and titles, the
 * x title.  The plot area is then c->x0..x1, c->y0..y1. */
static void chart_open(chart *c, FILE *f, const char *cls, const char *metric, const char *scheme, int w,
                       int h, const char *title, const legend_key *keys, int n_keys, const bench_axis *ya,
                       const char *ytitle, const char *xtitle)
{
    c->f = f;
    c->ya = *ya;
    fprintf(
        f,
        "<svg xmlns='http://www.w3.org/2000/svg' class='chart %s' viewBox='0 0 %d %d' width='%d' height='%d' "
        "font-family='sans-serif' font-size='11' data-chart='%s' data-ymax='%g'",
        cls, w, h, w, h, metric, ya->max);
    if (scheme) {
        fputs(" data-scheme='", f);
        esc(f, scheme);
        fputs("'", f);
    }
    fputs(" role='img'><title>", f);
    esc(f, title);
    fprintf(f, "</title>\n<text x='%d' y='16' font-size='13' font-weight='bold'>", 8);
    esc(f, title);
    fputs("</text>\n<g class='legend'>", f);
    double lx = ML, ly = 34;
    for (int i = 0; i < n_keys; i++) {
        size_t len = strlen(keys[i].label);
        double kw = 22 + 6.6 * (double)(len > 40 ? 41 : len) + 14;
        if (lx + kw > w - MR && lx > ML) {
            lx = ML;
            ly += 16;
        }
        fputs("<g class='key'", f);
        if (keys[i].scheme) {
            fputs(" data-scheme='", f);
            esc(f, keys[i].scheme);
            fputs("'", f);
        }
        fputs(">", f);
        if (keys[i].dash)
            fprintf(f,
                    "<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='%s' stroke-width='2.5' "
                    "stroke-dasharray='%s'/>",
                    lx, ly - 4, lx + 18, ly - 4, keys[i].color, keys[i].dash);
        else
            fprintf(f, "<rect x='%.0f' y='%.0f' width='14' height='10' fill='%s'/>", lx, ly - 9,
                    keys[i].color);
        fprintf(f, "<text x='%.0f' y='%.0f'>", lx + 22, ly);
        escn(f, keys[i].label, 40);
        fputs("</text></g>", f);
        lx += kw;
    }
    fputs("</g>\n", f);
    c->x0 = ML;
    c->x1 = w - MR;
    c->y0 = ly + 14;
    c->y1 = h - MB;
    for (int i = 0; i <= ya->n; i++) {
        double v = ya->step * i, y = ypx(c, v);
        char lab[32];
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'/>", c->x0, y, c->x1, y,
                i ? "#e3e3e3" : "#333");
        fprintf(f, "<text class='ytick' x='%.1f' y='%.1f' text-anchor='end'>%s</text>\n", c->x0 - 5, y + 4,
                bench_axis_label(ya, v, lab, sizeof(lab)));
    }
    fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#333'/>\n", c->x0, c->y0, c->x0, c->y1);
    fprintf(f, "<text x='14' y='%.1f' text-anchor='middle' transform='rotate(-90 14 %.1f)'>%s</text>\n",
            (c->y0 + c->y1) / 2, (c->y0 + c->y1) / 2, ytitle);
    fprintf(f, "<text x='%.1f' y='%d' text-anchor='middle'>%s</text>\n", (c->x0 + c->x1) / 2, h - 6, xtitle);
}

static void chart_close(chart *c) { fputs("</svg>\n", c->f); }

static void chart_note(chart *c, const char *text)
{
    fprintf(c->f, "<text x='%.1f' y='%.1f' text-anchor='middle' fill='#777'>%s</text>\n", (c->x0 + c->x1) / 2,
            (c->y0 + c->y1) / 2, text);
}

/* x ticks of a linear axis 0..xa->max mapped onto the plot. */
static void xticks_linear(chart *c, const bench_axis *xa)
{
    for (int i = 0; i <= xa->n; i++) {
        double v = xa->step * i, x = c->x0 + (c->x1 - c->x0) * v / xa->max;
        char lab[32];
        fprintf(c->f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#333'/>", x, c->y1, x,
                c->y1 + 4);
        fprintf(c->f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>\n", x, c->y1 + 16,
                bench_axis_label(xa, v, lab, sizeof(lab)));
    }
}

/* A polyline of points (x[i], y[i]) in data units, with markers when they
 * are few enough to see. */
static void series(chart *c, const bench_axis *xa, const double *xs, const double *ys, int np,
                   const char *color, const char *dash, double width, const char *scheme, const char *name)
{
    FILE *f = c->f;
    fprintf(f, "<polyline class='series' data-series='%s' data-scheme='", name);
    esc(f, scheme);
    fprintf(f, "' fill='none' stroke='%s' stroke-width='%.1f'%s%s%s points='", color, width,
            dash ? " stroke-dasharray='" : "", dash ? dash : "", dash ? "'" : "");
    for (int i = 0; i < np; i++)
        fprintf(f, "%.1f,%.1f ", c->x0 + (c->x1 - c->x0) * xs[i] / xa->max, ypx(c, ys[i]));
    fputs("'/>\n", f);
    if (np <= 40)
        for (int i = 0; i < np; i++)
            fprintf(f, "<circle cx='%.1f' cy='%.1f' r='%.1f' fill='%s'/>",
                    c->x0 + (c->x1 - c->x0) * xs[i] / xa->max, ypx(c, ys[i]), dash ? 1.5 : 2.2, color);
    if (np <= 40)
        fputs("\n", f);
}

#define MAX_KEYS 64

/* Legend keys of every scheme (at most MAX_KEYS), in scheme colours;
 * returns how many. */
static int scheme_keys(const fig *g, int n, legend_key *keys, const char *dash)
{
    memset(keys, 0, sizeof(legend_key) * MAX_KEYS);
    int k = n < MAX_KEYS ? n : MAX_KEYS;
    for (int s = 0; s < k; s++)
        keys[s] = (legend_key){ g[s].r->scheme, g[s].color, dash, g[s].r->scheme };
    return k;
}

/* ------------------------------------------------------------ comparison charts */

/* The latency axis every latency-over-time chart shares (per-second p99). */
static void latency_axis(const fig *g, int n, bench_axis *ya, bench_axis *xa)
{
    double ymax = 0, tmax = 0;
    for (int s = 0; s < n; s++)
        for (int i = 0; i < g[s].r->n_ticks; i++) {
            const bench_tick *t = &g[s].r->ticks[i];
            ymax = ms(t->p99_ns) > ymax ? ms(t->p99_ns) : ymax;
            ymax = ms(t->p50_ns) > ymax ? ms(t->p50_ns) : ymax;
            tmax = t->t_s > tmax ? t->t_s : tmax;
        }
    bench_axis_nice(ymax, 5, ya);
    bench_axis_int(round(tmax * 100) / 100, 10, xa); /* a tick at 3.0002 s: an axis to 3 */
}

static int any_ticks(const fig *g, int n)
{
    for (int s = 0; s < n; s++)
        if (g[s].r->n_ticks)
            return 1;
    return 0;
}

/* One scheme's p50 / p99 (or ops/s) timeline as a series on c. */
static void tick_series(chart *c, const bench_axis *xa, const bench_result *r, int what, const char *color,
                        const char *dash, double width)
{
    double *xs = r->n_ticks ? cs_calloc((size_t)r->n_ticks * 2, sizeof(double)) : NULL;
    if (!xs)
        return;
    double *ys = xs + r->n_ticks;
    for (int i = 0; i < r->n_ticks; i++) {
        xs[i] = r->ticks[i].t_s;
        ys[i] = what == 0   ? ms(r->ticks[i].p50_ns)
                : what == 1 ? ms(r->ticks[i].p99_ns)
                            : r->ticks[i].ops_per_s;
    }
    series(c, xa, xs, ys, r->n_ticks, color, dash, width, r->scheme,
           what == 0   ? "p50"
           : what == 1 ? "p99"
                       : "ops_s");
    cs_free(xs);
}

static const char NO_TICKS[] = "no per-second samples: the measured run was shorter than 1 s";

static void chart_latency_time(FILE *f, const fig *g, int n)
{
    bench_axis ya, xa;
    latency_axis(g, n, &ya, &xa);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    chart c;
    chart_open(&c, f, "cmp", "latency", NULL, CW, CH, "Latency per second: p99 solid, p50 dashed", keys,
               n_keys, &ya, "latency (ms)", "seconds since the end of warm-up");
    if (!any_ticks(g, n))
        chart_note(&c, NO_TICKS);
    else
        xticks_linear(&c, &xa);
    for (int s = 0; s < n; s++) {
        tick_series(&c, &xa, g[s].r, 1, g[s].color, NULL, 2);
        tick_series(&c, &xa, g[s].r, 0, g[s].color, "5 3", 1.3);
    }
    chart_close(&c);
}

static void chart_throughput_time(FILE *f, const fig *g, int n)
{
    bench_axis ya, xa, unused;
    double ymax = 0;
    for (int s = 0; s < n; s++)
        for (int i = 0; i < g[s].r->n_ticks; i++)
            ymax = g[s].r->ticks[i].ops_per_s > ymax ? g[s].r->ticks[i].ops_per_s : ymax;
    bench_axis_nice(ymax, 5, &ya);
    latency_axis(g, n, &unused, &xa);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    chart c;
    chart_open(&c, f, "cmp", "throughput", NULL, CW, CH, "Throughput per second", keys, n_keys, &ya,
               "successful operations per second", "seconds since the end of warm-up");
    if (!any_ticks(g, n))
        chart_note(&c, NO_TICKS);
    else
        xticks_linear(&c, &xa);
    for (int s = 0; s < n; s++)
        tick_series(&c, &xa, g[s].r, 2, g[s].color, NULL, 2);
    chart_close(&c);
}

/* Grouped bars: n_cat categories, one bar per scheme in each, value
 * v[s * n_cat + k] (NaN: no bar); tip() writes each bar's <title>.  With
 * compact, a category's bars share its width among the schemes that have
 * one (operations differ between schemes); otherwise each scheme keeps its
 * slot, so that position and colour agree across categories.  slot_x and
 * slot_w (NULL, or n * n_cat entries) get each bar's left edge and width. */
typedef void bar_tip_cb(FILE *f, const fig *g, int s, int k, double v, const void *ctx);

static void bars(chart *c, const fig *g, int n, int n_cat, const double *v, const char *metric_name,
                 bar_tip_cb *tip, const void *ctx, bool compact, double *slot_x, double *slot_w)
{
    double gw = (c->x1 - c->x0) / n_cat;
    for (int k = 0; k < n_cat; k++) {
        int present = 0;
        for (int s = 0; s < n; s++)
            present += !isnan(v[s * n_cat + k]);
        int slots = compact ? present : n;
        double bw = slots ? gw * 0.8 / slots : 0;
        if (compact && bw > 48)
            bw = 48;
        double left = c->x0 + gw * k + (gw - bw * slots) / 2;
        for (int s = 0, j = 0; s < n; s++) {
            double x = v[s * n_cat + k];
            int slot = compact ? j : s;
            if (slot_x) {
                slot_x[s * n_cat + k] = left + bw * slot;
                slot_w[s * n_cat + k] = bw;
            }
            if (isnan(x))
                continue;
            j++;
            double y = ypx(c, x);
            fprintf(c->f, "<rect class='bar' data-series='%s' data-scheme='", metric_name);
            esc(c->f, g[s].r->scheme);
            fprintf(c->f, "' x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'><title>",
                    left + bw * slot, y, bw > 1.5 ? bw - 0.5 : bw, c->y1 - y, g[s].color);
            tip(c->f, g, s, k, x, ctx);
            fputs("</title></rect>", c->f);
        }
    }
    fputs("\n", c->f);
}

/* Category labels centred under each group. */
static void xlabels(chart *c, int n_cat, const char *const *labels, int max_chars)
{
    double gw = (c->x1 - c->x0) / n_cat;
    for (int k = 0; k < n_cat; k++) {
        fprintf(c->f, "<text x='%.1f' y='%.1f' text-anchor='middle'>", c->x0 + gw * (k + 0.5), c->y1 + 16);
        escn(c->f, labels[k], max_chars);
        fputs("</text>", c->f);
    }
    fputs("\n", c->f);
}

static void tip_op(FILE *f, const fig *g, int s, int k, double v, const void *ctx)
{
    const char *const *names = ctx;
    char a[32];
    esc(f, g[s].r->scheme);
    fputs(" ", f);
    esc(f, names[k]);
    fprintf(f, ": p99 %s", bench_fmt_ms(v, a, sizeof(a)));
}

static void chart_op_latency(FILE *f, const fig *g, int n)
{
    const char *names[64];
    int n_cat = 0;
    for (int s = 0; s < n; s++)
        for (int i = 0; i < g[s].r->n_ops; i++) {
            int k = 0;
            while (k < n_cat && strcmp(names[k], g[s].r->ops[i].name))
                k++;
            if (k == n_cat && n_cat < 64)
                names[n_cat++] = g[s].r->ops[i].name;
        }
    double v[n * (n_cat ? n_cat : 1)], p50[n * (n_cat ? n_cat : 1)], vmax = 0;
    for (int s = 0; s < n; s++)
        for (int k = 0; k < n_cat; k++) {
            v[s * n_cat + k] = p50[s * n_cat + k] = NAN;
            for (int i = 0; i < g[s].r->n_ops; i++)
                if (!strcmp(g[s].r->ops[i].name, names[k]) && g[s].r->ops[i].ok) {
                    v[s * n_cat + k] = ms(bench_hist_pct(&g[s].r->ops[i].hist, 99));
                    p50[s * n_cat + k] = ms(bench_hist_pct(&g[s].r->ops[i].hist, 50));
                    vmax = v[s * n_cat + k] > vmax ? v[s * n_cat + k] : vmax;
                }
        }
    bench_axis ya;
    bench_axis_nice(vmax, 5, &ya);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    chart c;
    chart_open(&c, f, "cmp", "op_latency", NULL, CW, CH,
               "Latency by operation, whole run: p99 bars, p50 marks", keys, n_keys, &ya, "latency (ms)",
               "operation");
    if (!n_cat) {
        chart_note(&c, "no operations");
        chart_close(&c);
        return;
    }
    double sx[n * n_cat], sw[n * n_cat];
    bars(&c, g, n, n_cat, v, "p99", tip_op, names, true, sx, sw);
    double gw = (c.x1 - c.x0) / n_cat;
    for (int k = 0; k < n_cat; k++)
        for (int s = 0; s < n; s++)
            if (!isnan(p50[s * n_cat + k]))
                fprintf(f,
                        "<line class='p50' x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#000' "
                        "stroke-width='2'/>",
                        sx[s * n_cat + k], sx[s * n_cat + k] + sw[s * n_cat + k] - 0.5,
                        ypx(&c, p50[s * n_cat + k]), ypx(&c, p50[s * n_cat + k]));
    xlabels(&c, n_cat, names, (int)(gw / 6.5));
    chart_close(&c);
}

/* Partition sizes: log2 bins lo..hi shared by every scheme (bin k holds
 * the partitions of 2^k to 2^(k+1) - 1 rows or bytes), as % of each
 * scheme's partitions, the axis extended to show the limit. */
typedef struct size_ctx {
    int lo, bytes;
} size_ctx;

static void size_label(double v, int bytes, char *out, size_t n)
{
    if (bytes)
        bench_fmt_bytes(v, out, n);
    else if (v < 1e4)
        snprintf(out, n, "%.0f", v);
    else
        bench_fmt_si(v, out, n);
}

static void tip_size(FILE *f, const fig *g, int s, int k, double v, const void *ctx)
{
    const size_ctx *sc = ctx;
    int bin = sc->lo + k;
    const uint64_t *h = sc->bytes ? g[s].r->size_hist_bytes : g[s].r->size_hist_rows;
    char a[32], b[32], c[32], d[32];
    esc(f, g[s].r->scheme);
    size_label(ldexp(1, bin), sc->bytes, a, sizeof(a));
    size_label(ldexp(1, bin + 1) - 1, sc->bytes, b, sizeof(b));
    fprintf(f, ": %s partition%s of %s%s%s%s (%s%%)", bench_fmt_count(h[bin], c, sizeof(c)),
            h[bin] == 1 ? "" : "s", bin ? a : "", bin ? " to " : "",
            bin         ? b
            : sc->bytes ? "0 to 1 B"
                        : "1",
            sc->bytes ? ""
            : bin     ? " rows"
                      : " row",
            bench_fmt_si(v, d, sizeof(d)));
}

static void chart_sizes(FILE *f, const fig *g, int n, int bytes)
{
    int lo = 39, hi = 0;
    for (int s = 0; s < n; s++) {
        const uint64_t *h = bytes ? g[s].r->size_hist_bytes : g[s].r->size_hist_rows;
        for (int i = 0; h && i < 40; i++)
            if (h[i]) {
                lo = i < lo ? i : lo;
                hi = i > hi ? i : hi;
            }
    }
    double limit = bytes ? (double)BENCH_LARGE_PARTITION_BYTES : (double)BENCH_LARGE_PARTITION_ROWS;
    int lim_bin = (int)floor(log2(limit));
    if (lo > hi)
        lo = hi = 0;
    if (hi < lim_bin)
        hi = lim_bin;
    int n_cat = hi - lo + 1;
    double v[n * n_cat], vmax = 0;
    for (int s = 0; s < n; s++) {
        const uint64_t *h = bytes ? g[s].r->size_hist_bytes : g[s].r->size_hist_rows;
        uint64_t tot = 0;
        for (int i = 0; h && i < 40; i++)
            tot += h[i];
        for (int k = 0; k < n_cat; k++) {
            uint64_t x = h ? h[lo + k] : 0;
            v[s * n_cat + k] = x ? 100.0 * (double)x / (double)tot : NAN;
            if (x && v[s * n_cat + k] > vmax)
                vmax = v[s * n_cat + k];
        }
    }
    bench_axis ya;
    bench_axis_nice(vmax > 100 ? 100 : vmax, 5, &ya);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    chart c;
    chart_open(&c, f, "cmp", bytes ? "size_bytes" : "size_rows", NULL, CW, CH,
               bytes ? "Partition sizes in bytes (log2 bins)" : "Partition sizes in rows (log2 bins)", keys,
               n_keys, &ya, "% of the scheme's partitions",
               bytes ? "bytes per partition (log2 bins: from a tick up to the next)"
                     : "rows per partition (log2 bins: from a tick up to the next)");
    size_ctx sc = { lo, bytes };
    bars(&c, g, n, n_cat, v, bytes ? "bytes" : "rows", tip_size, &sc, false, NULL, NULL);
    /* ticks at the bin edges, as many labels as fit */
    double gw = (c.x1 - c.x0) / n_cat;
    int every = 1;
    while (gw * every < (bytes ? 52 : 30))
        every *= 2;
    for (int k = 0; k <= n_cat; k++) {
        double x = c.x0 + gw * k;
        fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#333'/>", x, c.y1, x, c.y1 + 4);
        if ((lo + k) % every == 0 && k < n_cat) {
            char lab[32];
            size_label(ldexp(1, lo + k), bytes, lab, sizeof(lab));
            fprintf(f, "<text x='%.1f' y='%.1f' text-anchor='middle'>%s</text>", x, c.y1 + 16, lab);
        }
    }
    /* the limit, placed on the log axis */
    double lx = c.x0 + gw * (log2(limit) - lo);
    char lab[48];
    size_label(limit, bytes, lab, sizeof(lab));
    fprintf(f,
            "\n<line class='limit' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#c00' stroke-width='1.5' "
            "stroke-dasharray='6 3'/><text x='%.1f' y='%.1f' text-anchor='end' fill='#c00'>%s%s</text>\n",
            lx, c.y0, lx, c.y1, lx - 4, c.y0 + 12, lab, bytes ? ": Cassandra warns" : " rows: usual limit");
    chart_close(&c);
}

static void tip_node(FILE *f, const fig *g, int s, int k, double v, const void *ctx)
{
    char a[32], b[32];
    esc(f, g[s].r->scheme);
    fprintf(f, ", node %d: %s the mean (%s ops)", k + 1, bench_fmt_ratio(v, a, sizeof(a)),
            bench_fmt_si(g[s].r->ring_ops.node_load ? g[s].r->ring_ops.node_load[k] : 0, b, sizeof(b)));
}

static void chart_nodes(FILE *f, const fig *g, int n, const bench_opts *o)
{
    int n_cat = 0;
    for (int s = 0; s < n; s++)
        n_cat = g[s].r->ring_ops.nodes > n_cat ? g[s].r->ring_ops.nodes : n_cat;
    if (n_cat > 64)
        n_cat = 64;
    int nc = n_cat ? n_cat : 1;
    double v[n * nc], vmax = 1;
    for (int s = 0; s < n; s++) {
        const bench_ring_result *ring = &g[s].r->ring_ops;
        for (int k = 0; k < nc; k++) {
            v[s * nc + k] = NAN;
            if (k < ring->nodes && ring->node_load && ring->mean_load > 0) {
                v[s * nc + k] = ring->node_load[k] / ring->mean_load;
                vmax = v[s * nc + k] > vmax ? v[s * nc + k] : vmax;
            }
        }
    }
    bench_axis ya;
    bench_axis_nice(vmax, 5, &ya);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    char title[160];
    snprintf(title, sizeof(title), "Simulated load per node over the mean (%d nodes, %d vnodes, RF %d)",
             o->nodes, o->vnodes, o->rf);
    chart c;
    chart_open(&c, f, "cmp", "node_load", NULL, CW, CH, title, keys, n_keys, &ya, "operations / mean",
               "node (same simulated ring for every scheme)");
    if (!n_cat) {
        chart_note(&c, "no partitions");
        chart_close(&c);
        return;
    }
    bars(&c, g, n, nc, v, "load", tip_node, NULL, false, NULL, NULL);
    const char *labels[64];
    char names[64][16];
    for (int k = 0; k < nc; k++) {
        snprintf(names[k], sizeof(names[k]), "n%d", k + 1);
        labels[k] = names[k];
    }
    xlabels(&c, nc, labels, 8);
    double y = ypx(&c, 1);
    fprintf(
        f,
        "<line class='mean' x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#333' stroke-dasharray='5 3'/>"
        "<text x='%.1f' y='%.1f' text-anchor='end'>mean</text>\n",
        c.x0, y, c.x1, y, c.x1, y - 3);
    chart_close(&c);
}

static void chart_top_share(FILE *f, const fig *g, int n)
{
    int kmax = 0;
    double vmax = 0;
    for (int s = 0; s < n; s++) {
        const bench_part_summary *p = &g[s].r->parts;
        kmax = p->n_top > kmax ? p->n_top : kmax;
        double cum = 0;
        for (int i = 0; i < p->n_top && p->total_ops; i++)
            cum += 100.0 * (double)p->top[i].ops / (double)p->total_ops;
        vmax = cum > vmax ? cum : vmax;
    }
    bench_axis ya, xa;
    bench_axis_nice(vmax, 5, &ya);
    bench_axis_int(kmax > 1 ? kmax : 1, 10, &xa);
    legend_key keys[MAX_KEYS];
    int n_keys = scheme_keys(g, n, keys, NULL);
    chart c;
    chart_open(&c, f, "cmp", "top_share", NULL, CW, CH,
               "Traffic on the hottest partitions, cumulative (dotted: an even spread)", keys, n_keys, &ya,
               "% of all operations", "hottest N partitions");
    if (!kmax) {
        chart_note(&c, "no partitions");
        chart_close(&c);
        return;
    }
    xticks_linear(&c, &xa);
    for (int s = 0; s < n; s++) {
        const bench_part_summary *p = &g[s].r->parts;
        if (!p->n_top || !p->total_ops)
            continue;
        double *xs = cs_calloc((size_t)p->n_top * 3, sizeof(double)), cum = 0;
        if (!xs)
            continue;
        double *ys = xs + p->n_top, *even = ys + p->n_top;
        for (int i = 0; i < p->n_top; i++) {
            cum += 100.0 * (double)p->top[i].ops / (double)p->total_ops;
            xs[i] = i + 1;
            ys[i] = cum;
            even[i] = p->count ? 100.0 * (i + 1) / (double)p->count : 0;
            even[i] = even[i] > ya.max ? ya.max : even[i];
        }
        series(&c, &xa, xs, ys, p->n_top, g[s].color, NULL, 2, g[s].r->scheme, "top_share");
        if (p->n_top > 1) {
            fprintf(f,
                    "<polyline class='even' fill='none' stroke='%s' stroke-width='1.2' stroke-dasharray='1 "
                    "3' points='",
                    g[s].color);
            for (int i = 0; i < p->n_top; i++)
                fprintf(f, "%.1f,%.1f ", c.x0 + (c.x1 - c.x0) * xs[i] / xa.max, ypx(&c, even[i]));
            fputs("'/>\n", f);
        }
        cs_free(xs);
    }
    chart_close(&c);
}

/* ------------------------------------------------------------ per-scheme detail */

#define MAX_MESSAGES 10

/* Error or warning kinds, most frequent first, at most MAX_MESSAGES. */
static void messages(FILE *f, const char *cls, const char *what, const bench_kind_count *k, int n)
{
    bool shown[n > 0 ? n : 1];
    memset(shown, 0, sizeof(shown));
    uint64_t rest = 0;
    char a[32];
    for (int m = 0; m < n; m++) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (!shown[i] && (best < 0 || k[i].count > k[best].count))
                best = i;
        shown[best] = true;
        if (m >= MAX_MESSAGES) {
            rest += k[best].count;
            continue;
        }
        fprintf(f, "<p class='msg %s'>%s &#215;%s: ", cls, what,
                bench_fmt_count(k[best].count, a, sizeof(a)));
        esc(f, k[best].kind);
        fputs("</p>\n", f);
    }
    if (n > MAX_MESSAGES)
        fprintf(f, "<p class='msg %s'>and %d more kinds of %s, %s in all</p>\n", cls, n - MAX_MESSAGES, what,
                bench_fmt_count(rest, a, sizeof(a)));
}

static void detail(FILE *f, const fig *x, int n, const fig *all, double share_max)
{
    const bench_result *r = x->r;
    char a[48], b[48], c[48];
    fputs("<div class='detail' data-scheme='", f);
    esc(f, r->scheme);
    fputs("'><h3>", f);
    swatch(f, x->color);
    esc(f, r->scheme);
    fputs("</h3><p class='desc'><code>", f);
    esc(f, r->table);
    fputs("</code>", f);
    if (r->description && *r->description) {
        fputs(": ", f);
        esc(f, r->description);
    }
    fprintf(f, "<br/>%s s measured, %s ops ok, %s errors</p>\n", bench_fmt_si(r->elapsed_s, a, sizeof(a)),
            bench_fmt_count(r->total_ok, b, sizeof(b)), bench_fmt_count(r->total_errors, c, sizeof(c)));
    /* latency on the comparison chart's axes */
    bench_axis ya, xa;
    latency_axis(all, n, &ya, &xa);
    legend_key keys[2] = { { "p99", x->color, "none", NULL }, { "p50", x->color, "5 3", NULL } };
    chart ch;
    chart_open(&ch, f, "detail", "latency", r->scheme, DW, DH,
               "Latency per second (same axes for every scheme)", keys, 2, &ya, "latency (ms)",
               "seconds since the end of warm-up");
    if (!r->n_ticks)
        chart_note(&ch, "no per-second samples");
    else
        xticks_linear(&ch, &xa);
    tick_series(&ch, &xa, r, 1, x->color, NULL, 2);
    tick_series(&ch, &xa, r, 0, x->color, "5 3", 1.3);
    chart_close(&ch);
    /* operations */
    fputs("<table class='ops'><thead><tr><th class='l' rowspan='2'>operation</th><th rowspan='2'>ops/s</th>"
          "<th colspan='5'>latency (ms)</th><th rowspan='2'>errors</th></tr>"
          "<tr><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr></thead><tbody>\n",
          f);
    for (int i = 0; i < r->n_ops; i++) {
        const bench_op_result *op = &r->ops[i];
        fputs("<tr><td class='l'>", f);
        esc(f, op->name);
        fprintf(f, "</td><td>%s</td>", bench_fmt_si(op->throughput, a, sizeof(a)));
        const double pct[] = { 50, 90, 99, 99.9 };
        for (int k = 0; k < 4; k++)
            fprintf(f, "<td>%s</td>", bench_fmt_si(ms(bench_hist_pct(&op->hist, pct[k])), a, sizeof(a)));
        fprintf(f, "<td>%s</td><td>%s</td></tr>\n", bench_fmt_si(ms(op->hist.max_ns), a, sizeof(a)),
                bench_fmt_count(op->errors, b, sizeof(b)));
    }
    fputs("</tbody></table>\n", f);
    /* hottest partitions, the share bar on one scale for every scheme */
    const bench_part_summary *p = &r->parts;
    fprintf(f, "<table class='hot'><caption>Hottest partitions (on one scale for every scheme)</caption>"
               "<thead><tr><th>#</th><th class='l'>share of ops</th><th>rows</th><th>bytes</th>"
               "<th>token (key: tooltip)</th></tr></thead><tbody>\n");
    for (int i = 0; i < p->n_top; i++) {
        const part_stat *ps = &p->top[i];
        double share = p->total_ops ? (double)ps->ops / (double)p->total_ops : 0;
        int over = bench_part_over(ps->rows, ps->bytes);
        fprintf(f,
                "<tr><td>%d</td><td class='l'><span class='bar' style='width:%.0fpx;background:%s'></span> "
                "%s%%</td>"
                "<td%s>%s</td><td%s>%s</td><td class='token' title='",
                i + 1, share_max > 0 ? 40 * share / share_max : 0, x->color,
                bench_fmt_si(100 * share, a, sizeof(a)), over & BENCH_OVER_ROWS ? " class='over'" : "",
                bench_fmt_count(ps->rows, b, sizeof(b)), over & BENCH_OVER_BYTES ? " class='over'" : "",
                bench_fmt_bytes((double)ps->bytes, c, sizeof(c)));
        fputs("key ", f);
        escn(f, r->top_keys && r->top_keys[i] ? r->top_keys[i] : "", 200);
        fprintf(f, "'>%lld</td></tr>\n", (long long)ps->token);
    }
    if (!p->n_top)
        fputs("<tr><td colspan='5'>no partitions</td></tr>\n", f);
    fputs("</tbody></table>\n", f);
    messages(f, "bad", "error", r->errors, r->n_errors);
    messages(f, "warn", "warning", r->warnings, r->n_warnings);
    fputs("</div>\n", f);
}

/* ------------------------------------------------------------ the page */

static const char CSS[] =
    "body{font-family:sans-serif;font-size:14px;color:#222;max-width:1360px;margin:16px auto;padding:0 12px}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:22px 0 8px}h3{font-size:15px;margin:0 0 4px}"
    "p.meta{color:#555;margin:0 0 12px}"
    "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#eee;font-weight:600}.l{text-align:left}"
    "table.summary{width:100%;font-size:13px}table.summary th{font-size:12px}table.summary "
    "td{white-space:nowrap}"
    "td.best{background:#d4edda}td.worst{background:#f8d7da;font-weight:bold}"
    "td.over,span.over{background:#c00;color:#fff;font-weight:bold}"
    "span.best{background:#d4edda;padding:0 4px}span.worst{background:#f8d7da;font-weight:bold;padding:0 4px}"
    "span.over{padding:0 4px}p.keys{font-size:12px;color:#555;margin:4px 0}"
    ".sw{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px}"
    "ul.findings{padding-left:0;list-style:none;margin:8px 0}"
    "ul.findings li{margin:3px 0;padding:4px 8px;border-left:5px solid #999}"
    "li.bad{border-color:#c00!important;background:#fbe9e9}li.warn{border-color:#e69f00!important;background:"
    "#fdf5e6}"
    "li.info{border-color:#999;background:#f6f6f6}"
    ".charts{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:14px}"
    "svg.chart{width:100%;height:auto;display:block}svg.cmp{max-width:660px}svg.detail{max-width:440px}"
    ".details{display:grid;grid-template-columns:repeat(auto-fill,minmax(400px,1fr));gap:18px}"
    ".detail{min-width:0}.detail table{width:100%;font-size:12px;margin-top:6px;table-layout:fixed}"
    ".detail td{white-space:nowrap;overflow:hidden}table.hot td.token{font-family:monospace}"
    "table.hot th:first-child{width:18px}table.hot th:nth-child(3){width:44px}"
    "table.hot th:nth-child(4){width:62px}table.hot th:nth-child(5){width:150px}"
    "table.hot td.token{font-size:11px}.detail td{text-overflow:ellipsis}"
    "table.hot caption{text-align:left;font-weight:600;padding:4px 0 2px}"
    "table.ops th:first-child{width:24%}"
    "span.bar{display:inline-block;height:9px;vertical-align:0}p.desc{margin:0 0 "
    "6px;color:#444;font-size:13px}"
    "p.msg{font-size:12px;margin:3px 0;overflow-wrap:anywhere}p.msg.bad{color:#a00}p.msg.warn{color:#a60}"
    "code{overflow-wrap:anywhere}"
    "@media "
    "print{body{max-width:none;margin:0;font-size:11px}.charts{gap:6px}svg.chart,.detail,tr{break-inside:"
    "avoid}"
    "h2{break-after:avoid}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}"
    "@page{size:A4 landscape;margin:10mm}";

int bench_report_html(const char *path, bench_result *rs, int n, const bench_opts *o)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fig g[n > 0 ? n : 1];
    figs_compute(g, rs, n);
    fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'/><title>cassette-bench: ");
    for (int s = 0; s < n; s++) {
        esc(f, rs[s].scheme);
        fputs(s + 1 < n ? " vs " : "", f);
    }
    fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>cassette-bench: ", CSS);
    for (int s = 0; s < n; s++) {
        esc(f, rs[s].scheme);
        fputs(s + 1 < n ? " vs " : "", f);
    }
    fputs("</h1>\n<p class='meta'>target ", f);
    esc(f, o->host);
    char a[32];
    fprintf(f,
            ":%d, %d connection%s &#215; %d in flight, %s%s; "
            "simulated ring of %d nodes &#215; %d vnodes, RF %d, fed with the partitions' real Murmur3 "
            "tokens.</p>\n",
            o->port, o->connections, o->connections == 1 ? "" : "s", o->concurrency,
            o->rate > 0 ? "fixed rate" : "max throughput",
            n > 1 ? "; each scheme on its own table, one after the other" : "", o->nodes, o->vnodes, o->rf);
    if (o->rate > 0)
        fprintf(f,
                "<p class='meta'>fixed rate %s ops/s (latency measured from each op's intended start).</p>\n",
                bench_fmt_si(o->rate, a, sizeof(a)));
    fputs("<h2>Summary</h2>\n", f);
    summary_table(f, g, n);
    findings(f, g, n, o);
    fputs("<h2>Side by side</h2>\n<div class='charts'>\n", f);
    chart_latency_time(f, g, n);
    chart_throughput_time(f, g, n);
    chart_sizes(f, g, n, 0);
    chart_sizes(f, g, n, 1);
    chart_nodes(f, g, n, o);
    chart_top_share(f, g, n);
    chart_op_latency(f, g, n);
    fputs("</div>\n<h2>Each scheme</h2>\n<div class='details'>\n", f);
    double share_max = 0;
    for (int s = 0; s < n; s++)
        share_max = g[s].hot_share > share_max ? g[s].hot_share : share_max;
    for (int s = 0; s < n; s++)
        detail(f, &g[s], n, g, share_max);
    fputs("</div>\n<p class='keys'>Partition rows and bytes are what the bench wrote (distinct rows, value "
          "bytes); "
          "traffic counts every operation that named the partition. Written by "
          "cassette-bench.</p>\n</body></html>\n",
          f);
    int rc = ferror(f) ? -1 : 0;
    if (fclose(f))
        rc = -1;
    return rc;
}
