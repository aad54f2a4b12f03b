/*
 * fuzz_inlined.c - a row of the store's inlined table as a report reads
 * it back (profile_dwarf__row): the table is anyone's to write who can
 * write the database.  A row read is one a report could have written:
 * at most LINES_MAX_FRAMES frames, every one named but the last, each
 * name printable (no control byte: they reach terminals and folded
 * files) and within LINES_NAME_MAX bytes before it was made printable.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binary/lines.h"
#include "profile/dwarf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile_dwarf *d = profile_dwarf__new(NULL, NULL, NULL);
	struct lines_frame fr[LINES_MAX_FRAMES];
	char *text = malloc(size + 1);
	int n;

	if (!d || !text)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	n = profile_dwarf__row(d, text, fr);
	if (n < 0 || n > LINES_MAX_FRAMES)
		__builtin_trap();
	for (int i = 0; i < n; i++) {
		if (!fr[i].name != (i == n - 1))
			__builtin_trap();
		check_text(fr[i].name);
		check_text(fr[i].file);
	}
out:
	free(text);
	profile_dwarf__delete(d);
	return 0;
}
