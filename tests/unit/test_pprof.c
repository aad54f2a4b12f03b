/*
 * test_pprof.c - the pprof writer, checked by decoding its output back:
 * gunzip (zlib), unpack (protobuf-c), then the samples, values (whole
 * counts by largest remainder, or exact), stacks (leaf first, truncated
 * by --k), function names, labels, mappings and the sampling period.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "inference/cct.h"
#include "inference/kccf.h"
#include "report/pprof.h"
#include "schema/report_store.h"
#include "report/profile.pb-c.h"
#include "tests/tap.h"

static Perftools__Profiles__Profile *decode(const char *gz, size_t len)
{
	static uint8_t out[1 << 20];
	z_stream z = { 0 };
	int rc;

	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return NULL;
	z.next_in = (uint8_t *)gz;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = sizeof(out);
	rc = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	if (rc != Z_STREAM_END)
		return NULL;
	return perftools__profiles__profile__unpack(NULL,
						    sizeof(out) - z.avail_out, out);
}

static const char *fname(const Perftools__Profiles__Profile *p, uint64_t loc)
{
	const Perftools__Profiles__Location *l = p->location[loc - 1];
	const Perftools__Profiles__Function *f =
		p->function[l->line[0]->function_id - 1];

	return p->string_table[f->name];
}

static Perftools__Profiles__Profile *roundtrip_pcs(struct cct *t, uint32_t k,
						   bool exact,
						   const struct store_pc *pcs,
						   size_t npcs)
{
	struct store_module mod = { 1, "/nonexistent/prog", "abcd" };
	struct pprof_input in = { .cct = t, .k = k, .modules = &mod,
		.nmodules = 1, .event = "cpu-clock", .clock = true,
		.period = 1000000, .time_ns = 5, .duration_ns = 7,
		.exact = exact, .pcs = pcs, .npcs = npcs };
	Perftools__Profiles__Profile *p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret = pprof__write(f, &in);

	fclose(f);
	is_int(ret, 0, "pprof written (k %u)", k);
	ok(len > 2 && (uint8_t)buf[0] == 0x1f && (uint8_t)buf[1] == 0x8b,
	   "gzip magic");
	p = decode(buf, len);
	free(buf);
	return p;
}

static Perftools__Profiles__Profile *roundtrip(struct cct *t, uint32_t k,
					       bool exact)
{
	return roundtrip_pcs(t, k, exact, NULL, 0);
}

/* The leaf c (function 4 at 0x400) at its sampled instructions. */
static void check_pcs(struct cct *t)
{
	/* sorted by function: a's (2) first, with none of c's */
	const struct store_pc pcs[] = { { 2, 0x8, 5 }, { 4, 0x10, 2 },
					{ 4, 0x20, 1 } };
	Perftools__Profiles__Profile *p = roundtrip_pcs(t, KCCF_INF, false,
							pcs, 3);
	int64_t at[2] = { 0 }, ns = 0;
	size_t parts = 0, whole = 0;

	for (size_t i = 0; p && i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint64_t addr = p->location[s->location_id[0] - 1]->address;

		if (strcmp(fname(p, s->location_id[0]), "c"))
			continue;
		parts++;
		whole += s->n_location_id == 4;
		at[0] += addr == 0x410 ? s->value[0] : 0;
		at[1] += addr == 0x420 ? s->value[0] : 0;
		ns += s->value[1];
	}
	is_int(parts, 2, "c's record: one sample per sampled instruction");
	is_int(whole, 2, "... each with c's whole stack");
	is_int(at[0], 2, "2 of c's 3 samples at 0x410, as its pcs say (2:1)");
	is_int(at[1], 1, "... and 1 at 0x420");
	is_int(ns, 3000000, "their cpu ns add up to the record's");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	/* --exact: a count of 0 for a fraction goes to the hottest pc */
	p = roundtrip_pcs(t, KCCF_INF, true, pcs + 1, 2);
	ns = 0;
	for (size_t i = 0; p && i < p->n_sample; i++)
		ns += p->sample[i]->value[1];
	is_int(ns, 4500000, "--exact with pcs: cpu ns keep the fraction");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
}

/* Two records of one leaf, one sample each, and two instructions of
 * one sample each: each instruction keeps its sample (split record by
 * record, both would go to the first). */
static void check_pc_totals(void)
{
	const struct store_pc pcs[] = { { 2, 0x10, 1 }, { 2, 0x20, 1 } };
	struct cct *t = cct__new();
	uint32_t m, x, y, lx, ly;
	Perftools__Profiles__Profile *p;
	int64_t at[2] = { 0 };

	cct__define(t, 1, "main", 1, 0x100);
	cct__define(t, 2, "leaf", 1, 0x200);
	cct__define(t, 3, "x", 1, 0x300);
	cct__define(t, 4, "y", 1, 0x400);
	cct__child(t, CCT_ROOT, 1, &m);
	cct__child(t, m, 3, &x);
	cct__child(t, m, 4, &y);
	cct__child(t, x, 2, &lx);
	cct__child(t, y, 2, &ly);
	cct__add(t, lx, 2, CCT_PRECISE, 1);
	cct__add(t, ly, 2, CCT_PRECISE, 1);
	p = roundtrip_pcs(t, KCCF_INF, false, pcs, 2);
	for (size_t i = 0; p && i < p->n_sample; i++) {
		uint64_t a = p->location[p->sample[i]->location_id[0] - 1]->address;

		at[0] += a == 0x210 ? p->sample[i]->value[0] : 0;
		at[1] += a == 0x220 ? p->sample[i]->value[0] : 0;
	}
	is_int(at[0], 1, "leaf's first instruction keeps its 1 sample");
	is_int(at[1], 1, "... and its second its 1, over two records");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	cct__delete(t);
}

int main(void)
{
	struct cct *t = cct__new();
	uint32_t main_n, a, b, c;
	Perftools__Profiles__Profile *p;
	int64_t values = 0, exact = 0;

	cct__define(t, 1, "main", 1, 0x100);
	cct__define(t, 2, "a", 1, 0x200);
	cct__define(t, 3, "b", 1, 0x300);
	cct__define(t, 4, "c", 1, 0x400);
	cct__child(t, CCT_ROOT, 1, &main_n);
	cct__child(t, main_n, 2, &a);
	cct__set_site(t, a, 0x123, 1);
	cct__child(t, a, 3, &b);
	cct__child(t, b, 4, &c);
	cct__add(t, c, 4, CCT_PRECISE, 3);
	cct__add(t, a, 1, CCT_AMBIGUOUS, 1.5);

	p = roundtrip(t, KCCF_INF, false);
	ok(p != NULL, "decoded back");
	if (!p)
		return tap_done();
	is_int(p->n_sample, 2, "one sample per record");
	is_int(p->n_sample_type, 2, "two values per sample");
	is_str(p->string_table[p->sample_type[1]->type], "cpu", "cpu time");
	is_str(p->string_table[p->sample_type[1]->unit], "nanoseconds", "in ns");
	is_str(p->string_table[0], "", "string 0 is empty");
	for (size_t i = 0; i < p->n_sample; i++) {
		values += p->sample[i]->value[0];
		exact += p->sample[i]->value[1];
	}
	is_int(values, 5, "sample counts are whole (3, and 1.5 -> 2)");
	is_int(exact, 5000000, "cpu ns: the counts x 1 ms");
	is_str(p->string_table[p->period_type->type], "cpu", "period type cpu");
	is_int(p->period, 1000000, "period 1 ms");
	is_int(p->duration_nanos, 7, "duration of the run");
	is_int(p->sample[0]->n_location_id, 4, "whole stack of c: 4 frames");
	is_str(fname(p, p->sample[0]->location_id[0]), "c", "leaf first");
	is_str(fname(p, p->sample[0]->location_id[3]), "main", "outermost last");
	is_str(p->string_table[p->sample[1]->label[0]->str], "ambiguous",
	       "labelled with how it was inferred");
	is_int(p->location[p->sample[0]->location_id[3] - 1]->address, 0x122,
	       "main's location is its call site of a (return address - 1)");
	is_int(p->location[p->sample[0]->location_id[2] - 1]->address, 0x200,
	       "a call site unknown: the function's start");
	is_int(p->location[p->sample[0]->location_id[0] - 1]->address, 0x400,
	       "the leaf's location is its function");
	is_int(p->n_mapping, 1, "one mapping");
	is_str(p->string_table[p->mapping[0]->build_id], "abcd", "with its build-id");
	is_int(p->time_nanos, 5, "time of the run");
	perftools__profiles__profile__free_unpacked(p, NULL);

	p = roundtrip(t, KCCF_INF, true);
	exact = 0;
	for (size_t i = 0; p && i < p->n_sample; i++)
		exact += p->sample[i]->value[1];
	is_int(exact, 4500000, "--exact: cpu ns keep the fraction (4.5 ms)");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);

	p = roundtrip(t, 1, false);
	ok(p && p->sample[0]->n_location_id == 2, "--k 1: c and its caller only");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	check_pcs(t);
	check_pc_totals();

	/* b's one sample split three ways: one whole sample, not 0 + 0 + 0
	 * and not three */
	cct__add(t, b, 1, CCT_AMBIGUOUS, 0.4);
	cct__add(t, b, 2, CCT_AMBIGUOUS, 0.3);
	cct__add(t, b, 3, CCT_AMBIGUOUS, 0.3);
	p = roundtrip(t, KCCF_INF, false);
	values = 0;
	for (size_t i = 0; p && i < p->n_sample; i++)
		if (!strcmp(fname(p, p->sample[i]->location_id[0]), "b"))
			values += p->sample[i]->value[0];
	is_int(values, 1, "largest remainder: b's 0.4 + 0.3 + 0.3 is 1 sample");
	is_int(p ? p->n_sample : 0, 3, "its zero-count records left out");
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	cct__delete(t);
	return tap_done();
}
