/* SPDX-License-Identifier: MIT */
/* Serial device set-up shared by the serial and rnode plugins (serial_port.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "err.h"
#include "serial_port.h"

static const struct {
	int64_t bps;
	speed_t code;
} SPEEDS[] = {
	{50, B50},           {75, B75},           {110, B110},         {134, B134},
	{150, B150},         {200, B200},         {300, B300},         {600, B600},
	{1200, B1200},       {1800, B1800},       {2400, B2400},       {4800, B4800},
	{9600, B9600},       {19200, B19200},     {38400, B38400},     {57600, B57600},
	{115200, B115200},   {230400, B230400},   {460800, B460800},   {500000, B500000},
	{576000, B576000},   {921600, B921600},   {1000000, B1000000}, {1152000, B1152000},
	{1500000, B1500000}, {2000000, B2000000}, {2500000, B2500000}, {3000000, B3000000},
	{3500000, B3500000}, {4000000, B4000000},
};

int rnsc_serial_speed_code(int64_t bps, speed_t *out)
{
	for (size_t k = 0; k < sizeof(SPEEDS) / sizeof(SPEEDS[0]); k++)
		if (SPEEDS[k].bps == bps) {
			*out = SPEEDS[k].code;
			return 0;
		}
	return RNSC_ERR_RANGE;
}

int rnsc_serial_open(const rnsc_serial_line *line, char *msg, size_t cap, int *err)
{
	const rnsc_serial_line *s = line;
	int fd = open(s->port, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	*err = RNSC_ERR_IO;
	if (fd < 0) {
		*err = errno == ENOENT   ? RNSC_ERR_NOENT
		       : errno == EACCES ? RNSC_ERR_PERM
					 : RNSC_ERR_IO;
		snprintf(msg, cap, "cannot open serial port %s: %s", s->port, strerror(errno));
		return -1;
	}
	struct termios t;
	if (tcgetattr(fd, &t) != 0) {
		snprintf(msg, cap, "%s is not a serial port: %s", s->port, strerror(errno));
		close(fd);
		return -1;
	}
	t.c_cflag |= CLOCAL | CREAD;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ECHOE | ECHOK | ECHONL | ISIG | IEXTEN);
#ifdef ECHOCTL
	t.c_lflag &= ~(tcflag_t)ECHOCTL;
#endif
#ifdef ECHOKE
	t.c_lflag &= ~(tcflag_t)ECHOKE;
#endif
	t.c_oflag &= ~(tcflag_t)(OPOST | ONLCR | OCRNL);
	t.c_iflag &= ~(tcflag_t)(INLCR | IGNCR | ICRNL | IGNBRK | BRKINT | PARMRK | ISTRIP | IXON |
				 IXOFF | IXANY);
#ifdef IUCLC
	t.c_iflag &= ~(tcflag_t)IUCLC;
#endif
	t.c_cflag &= ~(tcflag_t)CSIZE;
	t.c_cflag |= s->databits == 5 ? CS5 : s->databits == 6 ? CS6 : s->databits == 7 ? CS7 : CS8;
	if (s->stopbits == 2)
		t.c_cflag |= CSTOPB;
	else
		t.c_cflag &= ~(tcflag_t)CSTOPB;
	t.c_iflag &= ~(tcflag_t)(INPCK | ISTRIP);
	t.c_cflag &= ~(tcflag_t)(PARENB | PARODD);
#ifdef CMSPAR
	t.c_cflag &= ~(tcflag_t)CMSPAR;
#endif
	if (s->parity == 'E')
		t.c_cflag |= PARENB;
	else if (s->parity == 'O')
		t.c_cflag |= PARENB | PARODD;
#ifdef CRTSCTS
	t.c_cflag &= ~(tcflag_t)CRTSCTS;
#endif
	t.c_cc[VMIN] = 0;
	t.c_cc[VTIME] = 0;
	cfsetispeed(&t, s->speed);
	cfsetospeed(&t, s->speed);
	if (tcsetattr(fd, TCSANOW, &t) != 0) {
		snprintf(msg, cap, "cannot configure serial port %s: %s", s->port, strerror(errno));
		close(fd);
		return -1;
	}
	/* pyserial raises DTR and RTS when neither flow control uses them; a pty has no
	 * modem lines, which is fine. */
	int lines = TIOCM_DTR | TIOCM_RTS;
	if (ioctl(fd, TIOCMBIS, &lines) != 0 && errno != EINVAL && errno != ENOTTY) {
		snprintf(msg, cap, "cannot raise DTR/RTS on %s: %s", s->port, strerror(errno));
		close(fd);
		return -1;
	}
	(void)tcflush(fd, TCIFLUSH);
	return fd;
}
