/*
 * tool.h: cassette-tool's offline commands (tools/offline.c).
 */
#ifndef CS_TOOLS_TOOL_H
#define CS_TOOLS_TOOL_H

int tool_sstable(int argc, char **argv);     /* dump|metadata|verify FILE */
int tool_commitlog(int argc, char **argv);   /* dump DIR */

#endif
