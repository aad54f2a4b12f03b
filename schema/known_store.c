/*
 * known_store.c - each program's known CIDs (table known_cids): the
 * keys of inference/known.h, one blob a program, read by a record when
 * it first meets the program and added to at its end.
 *
 * The blob is 8 bytes a key in host order, sorted.  It is read as
 * untrusted: a length that is not a whole number of keys, or over
 * KNOWN_MAX, reads as none; keys out of order are sorted before they
 * are used.  A key stands for a CID the program's path map explains,
 * so the worst a crafted row can do is leave copies not unwound whose
 * samples are then inferred from their CIDs.
 */
#include <stdlib.h>
#include <string.h>

#include "binary/module.h"
#include "inference/known.h"
#include "schema/store_int.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* The keys of @s's blob column 0, sorted and each once, into a new
 * array (*@n; NULL and 0 for none, or for a blob that is not keys).
 * 0 or -1 (no memory). */
static int blob_keys(sqlite3_stmt *s, uint64_t **v, size_t *n)
{
	const void *b = sqlite3_column_blob(s, 0);
	size_t len = (size_t)sqlite3_column_bytes(s, 0), m = len / 8, k = 0;
	bool sorted = true;

	*v = NULL;
	*n = 0;
	if (!b || !m || len % 8 || m > KNOWN_MAX)
		return 0;
	*v = malloc(len);
	if (!*v)
		return -1;
	memcpy(*v, b, len);
	for (size_t i = 1; i < m && sorted; i++)
		sorted = (*v)[i - 1] < (*v)[i];
	if (sorted) {
		*n = m;
		return 0;
	}
	qsort(*v, m, sizeof(**v), cmp_u64);
	for (size_t i = 1; i < m; i++)
		if ((*v)[i] != (*v)[k])
			(*v)[++k] = (*v)[i];
	*n = k + 1;
	return 0;
}

/* Program row @pid's stored keys into *@v (*@n).  0 or -1. */
static int stored_keys(struct store *st, int64_t pid, uint64_t **v, size_t *n)
{
	sqlite3_stmt *s;
	int rc;

	*v = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(st->db, "SELECT cids FROM known_cids"
			       " WHERE program_id = ?", -1, &s, NULL))
		return store__db_error(st, "reading the known CIDs");
	sqlite3_bind_int64(s, 1, pid);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && blob_keys(s, v, n)) {
		sqlite3_finalize(s);
		store__set_error(st, "reading the known CIDs: out of memory");
		return -1;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		free(*v);
		return store__db_error(st, "reading the known CIDs");
	}
	return 0;
}

int store__read_known(struct store *st, const struct module *prog,
		      struct known_set *k, size_t *n)
{
	uint64_t *v;
	size_t m;
	int64_t pid;
	int found = store__find_module(st, module__path(prog),
				       module__build_id(prog), &pid);

	*n = 0;
	if (found <= 0)
		return found;
	if (stored_keys(st, pid, &v, &m))
		return -1;
	for (size_t i = 0; i < m && !known__add(k, v[i]); i++)
		(*n)++;
	free(v);
	return 0;
}

/* Merges sorted @a[0, @na) and @b[0, @nb) (each key once) into @out,
 * at most KNOWN_MAX: the count. */
static size_t merge(const uint64_t *a, size_t na, const struct known_key *b,
		    size_t nb, uint64_t *out)
{
	size_t i = 0, j = 0, m = 0;

	while ((i < na || j < nb) && m < KNOWN_MAX) {
		if (j == nb || (i < na && a[i] < b[j].key))
			out[m++] = a[i++];
		else if (i == na || b[j].key < a[i])
			out[m++] = b[j++].key;
		else
			out[m++] = a[i++], j++;
	}
	return m;
}

/* Adds program @v[0].prog's keys @v[0, @n) to its row. */
static int write_program(struct store *st, const struct known_key *v,
			 size_t n)
{
	uint64_t *old, *all;
	sqlite3_stmt *s;
	size_t nold, m;
	int64_t pid;
	int ret;

	if (store__module_id(st, v[0].prog, &pid) ||
	    stored_keys(st, pid, &old, &nold))
		return -1;
	all = malloc((nold + n) * sizeof(*all));
	if (!all) {
		free(old);
		store__set_error(st, "writing the known CIDs: out of memory");
		return -1;
	}
	m = merge(old, nold, v, n, all);
	free(old);
	if (m == nold) {	/* nothing new */
		free(all);
		return 0;
	}
	if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO known_cids"
			       " VALUES (?, ?)", -1, &s, NULL)) {
		free(all);
		return store__db_error(st, "writing the known CIDs");
	}
	sqlite3_bind_int64(s, 1, pid);
	sqlite3_bind_blob64(s, 2, all, m * sizeof(*all), SQLITE_STATIC);
	ret = sqlite3_step(s) == SQLITE_DONE ? 0 :
	      store__db_error(st, "writing the known CIDs");
	sqlite3_finalize(s);
	free(all);
	return ret;
}

int store__write_known(struct store *st, const struct known_key *v, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && v[j].prog == v[i].prog; j++)
			;
		if (v[i].prog && write_program(st, v + i, j - i))
			return -1;
	}
	return 0;
}
