/* SPDX-License-Identifier: MIT */
/*
 * Export macro of librnsc: RNSC_API marks the functions the shared library exports (it is
 * built with -fvisibility=hidden); for a program or plugin that includes the headers it
 * expands to nothing.
 */
#ifndef RNSC_EXPORT_H
#define RNSC_EXPORT_H

#if defined(RNSC_BUILDING_LIB) && defined(__GNUC__)
#define RNSC_API __attribute__((visibility("default")))
#else
#define RNSC_API
#endif

#endif
