/*
 * test_arr.c - activation record resizing: the frame analysis on
 * hand-assembled functions (safe, and each way of being unsafe), the
 * encoding of the grown "sub", the height model, and the search on a
 * hand-made path map: a separable collision gets a pad, A-B-D/B-A-D is
 * reported and left alone, the growth bound holds, and a seed gives the
 * same pads every time.
 */
#include <stdio.h>
#include <string.h>

#include "binary/frame.h"
#include "inference/arr.h"
#include "tests/tap.h"

/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; mov %rdi,-0x8(%rbp);
 * call .+0; leave; ret */
static const uint8_t safe_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
	0x20, 0x48, 0x89, 0x7d, 0xf8, 0xe8, 0x00, 0x00, 0x00, 0x00, 0xc9, 0xc3 };
/* the same with an instruction scheduled into the prologue and after
 * leave: push %rbp; add $1,%rdi; mov %rsp,%rbp; sub $0x10,%rsp;
 * leave; xor %rdx,%rax; ret */
static const uint8_t sched_fn[] = { 0x55, 0x48, 0x83, 0xc7, 0x01, 0x48, 0x89,
	0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0x48, 0x31, 0xd0, 0xc3 };
/* sub $0x18,%rsp; mov %rdi,0x8(%rsp); add $0x18,%rsp; ret */
static const uint8_t nofp_fn[] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0x89, 0x7c,
	0x24, 0x08, 0x48, 0x83, 0xc4, 0x18, 0xc3 };
/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; mov %rdi,0x8(%rsp); leave;
 * ret */
static const uint8_t rsp_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
	0x20, 0x48, 0x89, 0x7c, 0x24, 0x08, 0xc9, 0xc3 };
/* push %rbp; mov %rsp,%rbp; call .+0; pop %rbp; ret */
static const uint8_t nosub_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0xe8, 0x00, 0x00,
	0x00, 0x00, 0x5d, 0xc3 };
/* push %rbp; mov %rsp,%rbp; sub $0x20,%rsp; add $0x20,%rsp; pop %rbp;
 * ret */
static const uint8_t addrsp_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
	0x20, 0x48, 0x83, 0xc4, 0x20, 0x5d, 0xc3 };
/* push %rbp; mov %rsp,%rbp; sub %rax,%rsp; leave; ret */
static const uint8_t alloca_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x29, 0xc4,
	0xc9, 0xc3 };
/* push %rbp; mov %rsp,%rbp; sub $0x78,%rsp; leave; ret */
static const uint8_t full_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec,
	0x78, 0xc9, 0xc3 };
/* push %rbp; mov %rsp,%rbp; sub $0x1000,%rsp; leave; ret */
static const uint8_t big_fn[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec,
	0x00, 0x10, 0x00, 0x00, 0xc9, 0xc3 };

static void test_frames(void)
{
	struct frame_info fi;
	uint8_t buf[8];

	frame__analyse(safe_fn, sizeof(safe_fn), 0x1000, &fi);
	ok(fi.safe, "frame-pointer function with rbp locals: safe (%s)",
	   fi.why ? fi.why : "");
	is_int(fi.sub_vaddr, 0x1004, "the sub is at +4");
	is_int(fi.sub_len, 4, "an imm8 sub");
	is_int(fi.frame, 0x20, "frame 32");
	is_int(fi.max_pad, 80, "imm8: may grow to 112 (<= 127, in 16s)");
	frame__analyse(sched_fn, sizeof(sched_fn), 0x1000, &fi);
	ok(fi.safe, "instructions scheduled into prologue and epilogue: safe (%s)",
	   fi.why ? fi.why : "");
	frame__analyse(nofp_fn, sizeof(nofp_fn), 0x1000, &fi);
	ok(!fi.safe && strstr(fi.why, "no frame-pointer prologue"),
	   "no frame pointer: unsafe (%s)", fi.why);
	frame__analyse(rsp_fn, sizeof(rsp_fn), 0x1000, &fi);
	is_str(fi.why, "locals addressed from RSP", "rsp-addressed local: unsafe");
	frame__analyse(nosub_fn, sizeof(nosub_fn), 0x1000, &fi);
	ok(!fi.safe && strstr(fi.why, "no sub"), "no sub: unsafe (%s)", fi.why);
	frame__analyse(addrsp_fn, sizeof(addrsp_fn), 0x1000, &fi);
	ok(!fi.safe && strstr(fi.why, "RSP changed"),
	   "epilogue add $N,%%rsp: unsafe (%s)", fi.why);
	frame__analyse(alloca_fn, sizeof(alloca_fn), 0x1000, &fi);
	ok(!fi.safe && strstr(fi.why, "not an immediate"),
	   "alloca: unsafe (%s)", fi.why);
	frame__analyse(full_fn, sizeof(full_fn), 0x1000, &fi);
	ok(!fi.safe && strstr(fi.why, "no room"), "imm8 at 120: no room (%s)",
	   fi.why);
	frame__analyse(big_fn, sizeof(big_fn), 0x1000, &fi);
	ok(fi.safe && fi.sub_len == 7 && fi.frame == 0x1000,
	   "imm32 sub: safe, frame 4096");
	frame__analyse(safe_fn, sizeof(safe_fn) - 4, 0x1000, &fi);
	ok(!fi.safe, "a function cut short is not safe (%s)", fi.why);

	is_int(frame__encode_sub(0x30, 4, buf), 0, "encode imm8");
	ok(!memcmp(buf, "\x48\x83\xec\x30", 4), "48 83 ec 30");
	is_int(frame__encode_sub(0x1010, 7, buf), 0, "encode imm32");
	ok(!memcmp(buf, "\x48\x81\xec\x10\x10\x00\x00", 7), "48 81 ec 10 10 00 00");
	is_int(frame__encode_sub(128, 4, buf), -34, "imm8 cannot hold 128: -ERANGE");
}

/*
 * Functions: 0 main, 1 via_a, 2 via_b, 3 target, 4 fa, 5 fb, 6 d, 7 lib
 * (not padable).  target collides under via_a and via_b; d under
 * fa->fb and fb->fa.
 */
static const struct arr_node map[] = {
	{ -1, 0, 32, 1, 0 },	/* 0 main */
	{ 0, 1, 80, 2, 5 },	/* 1 main;via_a */
	{ 1, 3, 120, 3, 30 },	/* 2 main;via_a;target */
	{ 0, 2, 80, 4, 5 },	/* 3 main;via_b */
	{ 3, 3, 120, 5, 10 },	/* 4 main;via_b;target */
	{ 0, 4, 64, 6, 0 },	/* 5 main;fa */
	{ 5, 5, 96, 7, 0 },	/* 6 main;fa;fb */
	{ 6, 6, 128, 8, 20 },	/* 7 main;fa;fb;d */
	{ 0, 5, 64, 9, 0 },	/* 8 main;fb */
	{ 8, 4, 96, 10, 0 },	/* 9 main;fb;fa */
	{ 9, 6, 128, 11, 20 },	/* 10 main;fb;fa;d */
	{ 0, 7, 48, 12, 5 },	/* 11 main;lib */
	{ 11, 3, 100, 13, 5 },	/* 12 main;lib;target */
};
#define NN (sizeof(map) / sizeof(map[0]))

static void test_search(void)
{
	struct arr_func funcs[8] = {
		{ true, 64 }, { true, 64 }, { true, 64 }, { true, 64 },
		{ true, 64 }, { true, 64 }, { true, 64 }, { false, 0 } };
	struct arr_opts o = { 7, 1.0, 1.25, 0 };
	struct arr_result r, r2;
	int64_t pads[8] = { 0, 16, 0, 0, 0, 0, 0, 0 }, h[NN];

	arr__heights(map, NN, pads, h);
	ok(h[2] == 136 && h[4] == 120 && h[1] == 80,
	   "height model: a pad on via_a moves what is below it, not via_a");
	is_int(arr__search(map, NN, funcs, 8, &o, &r), 0, "search runs");
	ok(r.precise_before == 20 && r.total == 100,
	   "before: via_a, via_b, lib, lib;target precise (%.0f of %.0f)",
	   r.precise_before, r.total);
	ok((r.pads[1] > 0) != (r.pads[2] > 0), "exactly one of via_a, via_b padded");
	is_int(r.pads[4] + r.pads[5], 0, "fa and fb never padded: no pad separates d");
	ok(r.inseparable_node[7] && r.inseparable_node[10] && !r.inseparable_node[2],
	   "the two d contexts are marked inseparable, target is not");
	ok(r.inseparable == 40, "inseparable weight 40 (%.0f)", r.inseparable);
	ok(r.precise_after == 60, "after: all but the d collision precise (%.0f)",
	   r.precise_after);
	ok(r.deepest_after <= 1.25 * r.deepest_before, "growth within the bound");
	is_int(arr__search(map, NN, funcs, 8, &o, &r2), 0, "again, same seed");
	ok(!memcmp(r.pads, r2.pads, sizeof(pads)), "the same seed, the same pads");
	arr_result__exit(&r2);
	arr_result__exit(&r);

	o.max_growth = 1.0;
	arr__search(map, NN, funcs, 8, &o, &r);
	/* target is the deepest frame below via_*: any pad would deepen it */
	ok(r.deepest_after <= r.deepest_before, "growth bound 1.0: the deepest stack stays");
	arr_result__exit(&r);

	funcs[1].padable = funcs[2].padable = false;
	o.max_growth = 1.25;
	arr__search(map, NN, funcs, 8, &o, &r);
	ok(r.precise_after == r.precise_before && r.inseparable_node[2],
	   "via_a and via_b not padable: the target collision is inseparable");
	arr_result__exit(&r);
}

int main(void)
{
	test_frames();
	test_search();
	return tap_done();
}
