/*
 * test_build_calls.c - a build's calls packed and read back as they
 * were, a tail call, an indirect call and taken functions among them;
 * blobs cut short, with counts past their length, or with bytes flipped
 * are refused or read within bounds, never trusted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "binary/module.h"
#include "profile/build_calls.h"
#include "tests/tap.h"

__attribute__((noinline)) int bc_callee(int x);
__attribute__((noinline)) int bc_callee(int x)
{
	return x * 7 + 1;
}

__attribute__((noinline)) int bc_caller(int x);
__attribute__((noinline)) int bc_caller(int x)
{
	return bc_callee(x) + bc_callee(x + 1);
}

/* A tail call, as GCC -O2 makes them: bc_tail's frame is bc_callee's
 * (a jmp rel32 at its entry, where the CFA is RSP + 8). */
int bc_tail(int x);
__asm__(".text\n.globl bc_tail\n.type bc_tail, @function\nbc_tail:\n"
	"\t.cfi_startproc\n\t.byte 0xe9\n\t.long bc_callee - . - 4\n"
	"\t.cfi_endproc\n.size bc_tail, . - bc_tail\n");

/* An indirect call; bc_hooked's address in a table (data, a relocation
 * in a PIE), bc_leaf's taken by the code that passes it (lea). */
__attribute__((noinline)) int bc_dispatch(int (*f)(int), int x);
__attribute__((noinline)) int bc_dispatch(int (*f)(int), int x)
{
	return f(x) * 3 + 1;
}

__attribute__((noinline)) int bc_hooked(int x);
__attribute__((noinline)) int bc_hooked(int x)
{
	return x ^ 5;
}

__attribute__((noinline)) int bc_leaf(int x);
__attribute__((noinline)) int bc_leaf(int x)
{
	return x + 11;
}

int (*const bc_hooks[])(int) = { bc_hooked };

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool same(const struct build_calls *a, const struct build_calls *b)
{
	if (a->cs.n != b->cs.n || a->cs.nexports != b->cs.nexports ||
	    a->cs.unknown != b->cs.unknown || a->nfuncs != b->nfuncs ||
	    a->cs.ntaken != b->cs.ntaken)
		return false;
	for (size_t i = 0; i < a->cs.ntaken; i++)
		if (a->cs.taken[i] != b->cs.taken[i])
			return false;
	for (size_t i = 0; i < a->cs.n; i++) {
		const struct callsite *x = &a->cs.v[i], *y = &b->cs.v[i];

		if (x->ret != y->ret || x->caller != y->caller ||
		    x->callee != y->callee || x->delta != y->delta ||
		    !same_str(x->import, y->import))
			return false;
	}
	for (size_t i = 0; i < a->cs.nexports; i++)
		if (a->cs.exports[i].addr != b->cs.exports[i].addr ||
		    strcmp(a->cs.exports[i].name, b->cs.exports[i].name))
			return false;
	for (size_t i = 0; i < a->nfuncs; i++)
		if (a->funcs[i].start != b->funcs[i].start ||
		    a->funcs[i].symbol != b->funcs[i].symbol ||
		    strcmp(a->funcs[i].label, b->funcs[i].label))
			return false;
	return true;
}

/* Whether what unpack gave is what its lookups need: names inside the
 * names, calls by return address, functions by start. */
static bool sound(const struct build_calls *bc)
{
	for (size_t i = 0; i < bc->cs.n; i++)
		if ((i && bc->cs.v[i - 1].ret > bc->cs.v[i].ret) ||
		    (bc->cs.v[i].import &&
		     (bc->cs.v[i].import < bc->cs.names ||
		      bc->cs.v[i].import >= bc->cs.names + bc->names_len)))
			return false;
	for (size_t i = 1; i < bc->nfuncs; i++)
		if (bc->funcs[i - 1].start >= bc->funcs[i].start)
			return false;
	for (size_t i = 1; i < bc->cs.ntaken; i++)
		if (bc->cs.taken[i - 1] >= bc->cs.taken[i])
			return false;
	return true;
}

static void test_round_trip(struct build_calls *bc, unsigned char *blob,
			    size_t len)
{
	struct build_calls back;
	unsigned char *again;
	size_t len2;
	const struct build_func *f;
	uint64_t caller = 0, callee = 0;

	is_int(build_calls__unpack(blob, len, &back), 0, "the blob unpacks");
	ok(same(bc, &back), "%zu calls, %zu exports, %zu functions read back "
	   "as they were", bc->cs.n, bc->cs.nexports, bc->nfuncs);
	is_int(build_calls__pack(&back, &again, &len2), 0, "packs again");
	ok(len2 == len && !memcmp(blob, again, len), "to the same bytes");
	free(again);
	for (size_t i = 0; i < back.nfuncs; i++) {
		if (!strcmp(back.funcs[i].label, "bc_caller"))
			caller = back.funcs[i].start;
		if (!strcmp(back.funcs[i].label, "bc_callee"))
			callee = back.funcs[i].start;
	}
	ok(caller && callee, "both test functions are named");
	f = build_calls__function(&back, callee);
	ok(f && f->symbol && !strcmp(f->label, "bc_callee"),
	   "build_calls__function finds one by its start");
	ok(!build_calls__function(&back, callee + 1),
	   "and nothing one byte in");
	{
		size_t calls = 0;

		for (size_t i = 0; i < back.cs.n; i++)
			calls += back.cs.v[i].caller == caller &&
				 back.cs.v[i].callee == callee &&
				 back.cs.v[i].delta >= 8;
		is_int(calls, 2, "bc_caller's two calls of bc_callee, each "
		       "with its height change");
		calls = 0;
		for (size_t i = 0; i < back.cs.n; i++)
			calls += back.cs.v[i].callee == callee &&
				 back.cs.v[i].delta == CALLSITE_TAIL &&
				 (f = build_calls__function(&back,
					back.cs.v[i].caller)) &&
				 !strcmp(f->label, "bc_tail");
		is_int(calls, 1, "bc_tail's jump to bc_callee: a tail call");
		calls = 0;
		for (size_t i = 0; i < back.cs.n; i++)
			calls += back.cs.v[i].callee == CALLSITE_INDIRECT &&
				 back.cs.v[i].delta >= 8 &&
				 (f = build_calls__function(&back,
					back.cs.v[i].caller)) &&
				 !strcmp(f->label, "bc_dispatch");
		is_int(calls, 1, "bc_dispatch's call through a pointer: "
		       "indirect, with its height change");
	}
	{
		const char *want[] = { "bc_hooked", "bc_leaf" };
		size_t taken = 0, callee_taken = 0;

		for (size_t i = 0; i < back.cs.ntaken; i++) {
			f = build_calls__function(&back, back.cs.taken[i]);
			for (size_t j = 0; f && j < 2; j++)
				taken += !strcmp(f->label, want[j]);
			callee_taken += f && !strcmp(f->label, "bc_callee");
		}
		is_int(taken, 2, "bc_hooked (a table's) and bc_leaf (passed) "
		       "are taken, of %zu", back.cs.ntaken);
		is_int(callee_taken, 0, "bc_callee, only ever called, is not");
	}
	build_calls__exit(&back);
}

static void test_hostile(const unsigned char *blob, size_t len)
{
	unsigned char *b = malloc(len);
	struct build_calls x;
	size_t refused = 0, cut = 0, sound_n = 0, read_n = 0;

	/* every prefix is refused */
	for (size_t l = 0; l < len; l += 1 + l / 64) {
		cut++;
		if (build_calls__unpack(blob, l, &x) == -EINVAL)
			refused++;
		else
			build_calls__exit(&x);
	}
	is_int(refused, cut, "every blob cut short is refused (%zu lengths)",
	       cut);
	/* counts past what the length holds: refused before allocating */
	memcpy(b, blob, len);
	memset(b + 8, 0xff, 8);
	is_int(build_calls__unpack(b, len, &x), -EINVAL,
	       "a count of 2^64 - 1 calls is refused");
	memcpy(b, blob, len);
	b[0] = 'X';
	is_int(build_calls__unpack(b, len, &x), -EINVAL,
	       "another magic is refused");
	memcpy(b, blob, len);
	b[4] = 1;
	is_int(build_calls__unpack(b, len, &x), -ESTALE,
	       "another version is refused as stale: decoded again");
	/* bytes flipped anywhere: refused, or read into something sound
	 * (the sanitizers watch every read) */
	srand(7);
	for (int i = 0; i < 3000; i++) {
		size_t at = (size_t)rand() % len;

		memcpy(b, blob, len);
		b[at] ^= (unsigned char)(1 + rand() % 255);
		if (build_calls__unpack(b, len, &x))
			continue;
		read_n++;
		sound_n += sound(&x);
		build_calls__exit(&x);
	}
	is_int(sound_n, read_n, "3000 flipped bytes: the %zu blobs read are "
	       "sound", read_n);
	free(b);
}

int main(void)
{
	struct module *m = module__open("/proc/self/exe");
	struct build_calls bc;
	unsigned char *blob;
	size_t len;

	/* keeps the functions */
	if (bc_caller(1) < 0 || bc_tail(1) < 0 ||
	    bc_dispatch(bc_leaf, 1) < 0 || bc_dispatch(bc_hooks[0], 2) < 0)
		return 1;
	is_int(module__error(m), 0, "this test's binary opens");
	is_int(build_calls__scan(m, &bc), 0, "its calls are read");
	ok(bc.cs.n > 10 && bc.nfuncs > 10, "%zu calls, %zu functions",
	   bc.cs.n, bc.nfuncs);
	is_int(build_calls__pack(&bc, &blob, &len), 0, "they pack");
	ok(len < bc.cs.n * 16 + bc.names_len + 4096,
	   "into %zu bytes, under 16 a call besides the names", len);
	test_round_trip(&bc, blob, len);
	test_hostile(blob, len);
	free(blob);
	build_calls__exit(&bc);
	module__delete(m);
	return tap_done();
}
