/* SPDX-License-Identifier: MIT */
/*
 * Opening a serial device the way pyserial does for the reference's serial-port
 * interfaces (SerialInterface, KISSInterface, RNodeInterface): shared by the serial and
 * rnode plugins, compiled into each (plugins never link librnsc).
 *
 * The device is opened O_NOCTTY|O_NONBLOCK|O_CLOEXEC and set raw through termios (no
 * echo, no line editing or signals, no CR/LF mapping, no software or hardware flow
 * control, CLOCAL|CREAD, VMIN = VTIME = 0), DTR and RTS raised where the device has modem
 * lines, and its input flushed. The caller owns the returned fd.
 */
#ifndef RNSC_SERIAL_PORT_H
#define RNSC_SERIAL_PORT_H

#include <stddef.h>
#include <stdint.h>
#include <termios.h>

typedef struct rnsc_serial_line {
	const char *port; /* device path, borrowed */
	speed_t speed;    /* a termios B* code (rnsc_serial_speed_code) */
	int databits;     /* 5..8 */
	int stopbits;     /* 1 or 2 */
	char parity;      /* 'N', 'E' or 'O' */
} rnsc_serial_line;

/* The termios code of a standard speed in bit/s: 0, or RNSC_ERR_RANGE. */
int rnsc_serial_speed_code(int64_t bps, speed_t *out);

/* Opens and configures line->port. Returns the fd, or -1 with msg filled (naming the
 * port) and *err set to RNSC_ERR_NOENT, RNSC_ERR_PERM or RNSC_ERR_IO. */
int rnsc_serial_open(const rnsc_serial_line *line, char *msg, size_t cap, int *err);

#endif
