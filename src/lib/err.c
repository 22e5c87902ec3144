/* SPDX-License-Identifier: MIT */
#include "err.h"

#include <string.h>

const char *rnsc_strerror(int err)
{
	switch (err) {
#define RNSC_X_TEXT(name, value, text)                                                             \
	case value:                                                                                \
		return text;
		RNSC_ERRORS(RNSC_X_TEXT)
#undef RNSC_X_TEXT
	}
	return "unknown error";
}

const char *rnsc_err_name(int err)
{
	switch (err) {
#define RNSC_X_NAME(name, value, text)                                                             \
	case value:                                                                                \
		return #name;
		RNSC_ERRORS(RNSC_X_NAME)
#undef RNSC_X_NAME
	}
	return "RNSC_ERR_UNKNOWN";
}

int rnsc_err_from_name(const char *name, int *out)
{
#define RNSC_X_PARSE(n, value, text)                                                               \
	if (strcmp(name, #n) == 0) {                                                               \
		*out = value;                                                                      \
		return 1;                                                                          \
	}
	RNSC_ERRORS(RNSC_X_PARSE)
#undef RNSC_X_PARSE
	return 0;
}
