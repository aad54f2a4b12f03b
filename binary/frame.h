/*
 * frame.h - whether a function's frame can grow in place, decided by
 * decoding its instructions (Capstone).
 *
 * Safe means: the frame-pointer prologue "push %rbp; mov %rsp,%rbp"
 * (after an optional endbr64, before optional pushes of callee-saved
 * registers), then "sub $N,%rsp"; no memory operand based on RSP and no
 * other change of RSP in the body (locals live below RBP); and every
 * exit (ret, or a jump out of the function) right after "leave" or
 * "pop %rbp", with RSP restored from RBP ("leave", "mov %rbp,%rsp",
 * "lea -N(%rbp),%rsp") and never by "add $N,%rsp".  Growing N then
 * moves nothing the body addresses: the CFA rule (RBP + 16) and every
 * local keep their place, the frame gets deeper.
 */
#ifndef ICPPD_BINARY_FRAME_H
#define ICPPD_BINARY_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct frame_info {
	bool safe;
	const char *why;	/* when not safe: a static string */
	uint64_t sub_vaddr;	/* the "sub $N,%rsp" instruction */
	unsigned sub_len;	/* its length: 4 (imm8) or 7 (imm32) */
	int64_t frame;		/* N */
	int64_t max_pad;	/* how much N may grow in place */
};

/* Analyses the @size bytes of code at @code, the function at @vaddr. */
void frame__analyse(const uint8_t *code, size_t size, uint64_t vaddr,
		    struct frame_info *out);

/* The instruction bytes of "sub $@frame,%rsp" in the encoding of
 * length @len (4 or 7) into @buf.  0, or -ERANGE when it does not fit. */
int frame__encode_sub(int64_t frame, unsigned len, uint8_t *buf);

#endif
