/*
 * dbquery.h - the first column of the first row of a query, read from a
 * database file with a connection of its own (what another process
 * would see).  -1 when there is none.
 */
#ifndef ICPPD_TESTS_DBQUERY_H
#define ICPPD_TESTS_DBQUERY_H

#include <sqlite3.h>

static inline long long query(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	long long v = -1;

	if (sqlite3_open(db, &h) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(h);
	return v;
}

#endif
