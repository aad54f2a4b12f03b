/*
 * coro.c - makecontext()/swapcontext() coroutines, on stacks that have
 * no fixed base: blocks of the brk heap (malloc), where the distance to
 * the block's top says nothing about the call path.  A round-robin
 * scheduler runs each coroutine a slice at a time, so every coroutine's
 * stack is live while the others run.
 *
 *   main -> schedule -> swapcontext ...
 *   [coroutine] co_main -> co_parse -> parse_leaf      (1 share)
 *   [coroutine] co_main -> co_render -> render_leaf    (2 shares)
 *
 * Usage: coro [MS]  MS: CPU milliseconds of one share (default 100);
 * four coroutines burn three shares each, in slices of MS/20.
 */
#include "burn.h"

#include <stdio.h>
#include <stdlib.h>
#include <ucontext.h>

#define NOINLINE __attribute__((noinline))
#define NCO 4
#define SLICES 20
#define STACK (64 * 1024)	/* under malloc's mmap threshold: heap */

volatile uint64_t sink;
uint64_t burn_ns = 100000000;

static ucontext_t sched_ctx, co_ctx[NCO];
static int done[NCO];
static int current;

static void yield(void)
{
	swapcontext(&co_ctx[current], &sched_ctx);
}

NOINLINE static void parse_leaf(void)
{
	burn_for(burn_ns / SLICES);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void render_leaf(void)
{
	burn_for(2 * burn_ns / SLICES);
	__asm__ volatile("" ::: "memory");
}

NOINLINE static void co_parse(void)
{
	for (int i = 0; i < SLICES; i++) {
		parse_leaf();
		yield();
	}
}

NOINLINE static void co_render(void)
{
	for (int i = 0; i < SLICES; i++) {
		render_leaf();
		yield();
	}
}

NOINLINE static void co_main(void)
{
	co_parse();
	co_render();
	done[current] = 1;
}

NOINLINE static void schedule(void)
{
	for (int left = NCO; left;) {
		left = 0;
		for (current = 0; current < NCO; current++) {
			if (done[current])
				continue;
			swapcontext(&sched_ctx, &co_ctx[current]);
			left += !done[current];
		}
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		burn_set_ms(argv[1]);
	for (int i = 0; i < NCO; i++) {
		getcontext(&co_ctx[i]);
		co_ctx[i].uc_stack.ss_sp = malloc(STACK);
		co_ctx[i].uc_stack.ss_size = STACK;
		co_ctx[i].uc_link = &sched_ctx;
		if (!co_ctx[i].uc_stack.ss_sp)
			return 1;
		makecontext(&co_ctx[i], co_main, 0);
	}
	schedule();
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
