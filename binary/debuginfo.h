/*
 * debuginfo.h - finding a binary's separate debug file the way the
 * toolchain does, for reports and exports (never for the root daemon's
 * sample loop): the build-id tree under /usr/lib/debug, the file its
 * .gnu_debuglink names (CRC checked) in the folders gdb searches, and
 * debuginfod by build-id when DEBUGINFOD_URLS is set (elfutils'
 * libdebuginfod, with its cache and timeouts).
 */
#ifndef ICPPD_BINARY_DEBUGINFO_H
#define ICPPD_BINARY_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>

/* Where the lookups look, in order (debuginfo__find). */
enum debuginfo_via { DEBUGINFO_NONE, DEBUGINFO_BUILD_ID, DEBUGINFO_LINK,
		     DEBUGINFO_DEBUGINFOD };

/*
 * The debug file of the binary at @path with build-id @build_id (hex;
 * "" when unknown: the build-id tree and debuginfod are skipped) into
 * @out: a regular file, opened without following a symlink, whose
 * build-id is @build_id (or, found by debuglink where either has no
 * build-id, whose CRC is the link's, CRC'd within a bound per file and
 * per process).  @network: debuginfod may be asked (when
 * DEBUGINFOD_URLS is set; its timeouts are DEBUGINFOD_TIMEOUT's).
 * What found it, or DEBUGINFO_NONE.  A debuginfod server that does not
 * answer clears DEBUGINFOD_URLS from this process's environment: the
 * rest of it, and its children, do not wait on it again.  Debuglink
 * answers are kept for the life of the process.  Any local user can
 * place candidates: call it where a timeout bounds it
 * (lines__debug_file()).
 */
enum debuginfo_via debuginfo__find(const char *path, const char *build_id,
				   bool network, char *out, size_t len);

/* Drops the debuglink answers kept and the bytes CRC'd so far (a
 * test's next lookup looks again, within a whole budget). */
void debuginfo__forget(void);

#endif
