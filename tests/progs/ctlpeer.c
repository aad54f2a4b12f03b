/*
 * ctlpeer.c - a control-socket client that misbehaves: connects and
 * says nothing, sends its request a byte a second, or asks for status
 * and never reads the answer.  It prints "closed" when the daemon
 * hangs up on it, or "open" after SECONDS.  With "serve" it is the
 * squatter instead: it listens at SOCKET for up to SECONDS and answers
 * one client with a forged status ("forged", then "ok").
 * Usage: ctlpeer SOCKET silent|slow|noread|serve SECONDS
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	const char *req = "status\n";
	time_t end;

	if (argc != 4 || strlen(argv[1]) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: ctlpeer SOCKET silent|slow|noread|serve SECONDS\n");
		return 2;
	}
	strcpy(sa.sun_path, argv[1]);
	if (!strcmp(argv[2], "serve")) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char line[64];
		int c;

		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1) ||
		    poll(&p, 1, atoi(argv[3]) * 1000) != 1 ||
		    (c = accept(fd, NULL, NULL)) < 0)
			return 1;
		if (read(c, line, sizeof(line)) < 0 ||
		    write(c, "forged\nok\n", 10) != 10)
			return 1;
		close(c);
		return 0;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("connect");
		return 1;
	}
	if (!strcmp(argv[2], "noread") && write(fd, req, strlen(req)) < 0)
		return 1;
	end = time(NULL) + atoi(argv[3]);
	for (size_t i = 0; time(NULL) < end; i++) {
		struct pollfd p = { .fd = fd, .events = POLLRDHUP };

		if (!strcmp(argv[2], "slow") && i < strlen(req) &&
		    send(fd, req + i, 1, MSG_NOSIGNAL) < 0)
			break;
		if (poll(&p, 1, 1000) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			break;
	}
	printf(time(NULL) < end ? "closed\n" : "open\n");
	return 0;
}
