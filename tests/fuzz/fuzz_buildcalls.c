/*
 * fuzz_buildcalls.c - a build's calls as a report reads them back from
 * the store (build_calls__unpack), where anyone who can write the
 * database may have crafted them: refused, or read into something that
 * packs again and reads back the same.
 */
#include <stdlib.h>
#include <string.h>

#include "profile/build_calls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct build_calls bc, back;
	unsigned char *blob, *again;
	size_t len, len2;

	if (build_calls__unpack(data, size, &bc))
		return 0;
	for (size_t i = 0; i < bc.cs.n; i++)	/* every name is readable */
		if (bc.cs.v[i].import && !memchr(bc.cs.v[i].import, 0,
			bc.names_len - (size_t)(bc.cs.v[i].import - bc.cs.names)))
			__builtin_trap();
	for (size_t i = 0; i < bc.nfuncs; i++)
		if (build_calls__function(&bc, bc.funcs[i].start) !=
		    &bc.funcs[i])
			__builtin_trap();
	if (build_calls__pack(&bc, &blob, &len))
		goto out;
	if (build_calls__unpack(blob, len, &back))
		__builtin_trap();
	if (build_calls__pack(&back, &again, &len2))
		goto out_back;
	if (len2 != len || memcmp(blob, again, len) || back.cs.n != bc.cs.n ||
	    back.nfuncs != bc.nfuncs || back.cs.nexports != bc.cs.nexports)
		__builtin_trap();
	free(again);
out_back:
	build_calls__exit(&back);
	free(blob);
out:
	build_calls__exit(&bc);
	return 0;
}
