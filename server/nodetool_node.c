/*
 * nodetool_node.c: nodetool's node-wide setting and status verbs (see
 * nodetool_int.h).  None yet.
 */
#include "server/nodetool_int.h"

int nodetool__run_node(srv *s, const char *verb, char **args, int n, cs_buf *o)
{
    return 0;
}
