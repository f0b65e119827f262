/*
 * restrict_int.h: shared by the WHERE analysis files only (restrict.c,
 * restrict_keys.c, filter.c; owner exec-read).  The public entry points
 * (cql__where_analyze, cql__filter_match*) are in exec_int.h.
 */
#ifndef CS_CQL_RESTRICT_INT_H
#define CS_CQL_RESTRICT_INT_H

#include "cql/exec_int.h"

#define CQL__MAX_KEYS 65536

#define CQL__ALLOW_FILTERING_MSG \
    "Cannot execute this query as it might involve data filtering and thus may have " \
    "unpredictable performance. If you want to execute this query despite the performance " \
    "unpredictability, use ALLOW FILTERING"

/* An = / IN restriction fixing columns [first, first+n) to one of k tuples. */
typedef struct cql_eqgroup { int first, n, k; cql_value *tuples; bool in; int raw; } cql_eqgroup;   /* raw: k before duplicates go */
/* A slice over columns [first, first+n).  Merged slices may bound each
 * side on a different prefix (Cassandra's `(b, c, d) > (..) AND b < ..`):
 * lo has lo_n values, hi has hi_n, and n is the longer. */
typedef struct cql_slicer {
    int first, n;
    int lo_n, hi_n;                      /* values in lo / hi */
    cql_value *lo, *hi;
    bool lo_set, hi_set, lo_incl, hi_incl;
    bool multi;                          /* from (or merged with) a tuple relation */
} cql_slicer;

/* What Cassandra's RestrictionSet maps one clustering column to: the
 * restriction last merged in over it.  A merge updates only the new
 * relation's columns, so a column may keep an older restriction, and
 * later merges see that one (RestrictionSet.mergeRestrictions). */
enum { CQL__CKR_EQ = 1, CQL__CKR_IN, CQL__CKR_SLICE };
typedef struct cql_ckrel {
    int id;                              /* 0: none; equal ids: one restriction */
    int first, n;                        /* its columns */
    int kind;                            /* CQL__CKR_* */
    bool multi;                          /* a MultiColumnRestriction */
    bool lo, hi;                         /* a slice's start / end bound */
} cql_ckrel;

typedef struct cql_wan {
    cql_eval *ev;
    const sch_table *t;
    cql_where *w;
    cql_where_kind kind;
    int flags;
    cs_error *e;
    cql_eqgroup pk_eq[16]; bool pk_has[16];   /* pk_eq: only [0, t->n_pk) is initialized */
    bool pk_slice;                       /* a pk column restricted by < > */
    bool pk_sliced[16];                  /* which ones */
    cql_eqgroup *ck_eq; cql_slicer *ck_sl;       /* indexed by ck position (group starts) */
    bool *ck_used;                       /* column restricted by anything */
    cql_ckrel *ck_rel;                   /* per ck position: its restriction */
    int ck_rel_ids;                      /* last cql_ckrel id handed out */
    cql_filter *filters; int n_filters, cap_filters;
    bool token_seen;
    bool tok_eq, tok_lo, tok_hi;       /* token() restrictions so far: =, a start bound, an end bound */
    const char *null_fmt, *null_col;   /* a row filter's null operand: refused after the ALLOW FILTERING check */
} cql_wan;

/* restrict.c */
cql_filter *cql__wan_new_filter(cql_wan *a, const sch_column *c, ast_op op);
/* restrict_keys.c: partition keys / clustering slices from the collected restrictions. */
int cql__wan_build_pks(cql_wan *a);
int cql__wan_build_ck(cql_wan *a);
/* filter.c */
bool cql__index_serves(const sch_table *t, const cql_filter *f);

#endif
