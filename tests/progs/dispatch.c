/*
 * dispatch.c - a dispatch loop through a table of eight handlers with
 * equal frames, the shape of an interpreter's opcode table.
 *
 * Every handler calls work(), which burns; h0..h7 have the same frame
 * size, so work()'s context identifier is the same through all eight:
 * a trained path map has eight candidates for it, each with the share
 * training measured.  Handler i burns (i + 8) parts of every 92, so the
 * true shares differ (8/92 ... 15/92) and a report that apportions by
 * the learned counts can be checked against them.
 *
 * Usage: dispatch MODE ROUNDS [MS]
 *   table:  each round calls h0..h7 through the table (indirect calls);
 *   direct: main calls h0..h7 directly, a call path training through
 *           the table never saw: the binary's direct calls are the only
 *           evidence for the callers above the handlers;
 *   main:   main burns ROUNDS times MS itself and calls nothing, so a
 *           map trained on it knows main alone: every call of a direct
 *           run is a guess;
 *   phases: eight phases of ROUNDS / 8 rounds, phase k calling h_k
 *           alone (work burning MS a round whatever the handler): after
 *           the first phase every CID is known, and each later one
 *           reaches work by a path not seen before.
 *   MS: CPU milliseconds work() burns per round in all (default 46).
 */
#include "truth.h"

#include <string.h>

volatile uint64_t sink;
uint64_t burn_ns = 1000000;

NOINLINE static void work(uint64_t ns)
{
	burn_for(ns);
}

#define HANDLER(i) \
NOINLINE static void h##i(uint64_t part) \
{ \
	volatile char pad[24]; \
	\
	pad[0] = i; \
	work(part * (i + 8)); \
	sink += pad[0]; \
}
HANDLER(0) HANDLER(1) HANDLER(2) HANDLER(3)
HANDLER(4) HANDLER(5) HANDLER(6) HANDLER(7)

static void (*const table[8])(uint64_t) = { h0, h1, h2, h3, h4, h5, h6, h7 };

/* The dispatch loop: one call site for all eight. */
NOINLINE static void dispatch(uint64_t part)
{
	for (unsigned op = 0; op < 8; op++)
		table[op](part);
	sink++;
}

/* Phase @op's round: one handler, the same frames as dispatch's. */
NOINLINE static void dispatch_one(unsigned op, uint64_t ns)
{
	table[op](ns / (op + 8));
	sink++;
}

/* A frame of another size than dispatch's, so that work's height
 * differs from the one training saw. */
NOINLINE static void direct(uint64_t part)
{
	volatile char pad[64];

	pad[0] = 1;
	h0(part); h1(part); h2(part); h3(part);
	h4(part); h5(part); h6(part); h7(part);
	sink += pad[0];
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 10;
	uint64_t part;

	if (argc > 3)
		burn_set_ms(argv[3]);
	else
		burn_ns = 46000000;
	part = burn_ns / 92;
	if (argc > 1 && !strcmp(argv[1], "main"))
		burn_for(burn_ns * (uint64_t)rounds);
	for (int r = 0; r < rounds && !(argc > 1 && !strcmp(argv[1], "main"));
	     r++) {
		if (argc > 1 && !strcmp(argv[1], "direct"))
			direct(part);
		else if (argc > 1 && !strcmp(argv[1], "phases"))
			dispatch_one((unsigned)(r * 8 / rounds), burn_ns);
		else
			dispatch(part);
	}
	truth_process_cpu();
	(void)truth;
	return (int)(sink & 0);
}
