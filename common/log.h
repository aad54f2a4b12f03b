/*
 * log.h - messages to stderr with levels (after earlyoom's msg.h).
 * Every line starts with "icppd: ".  Errors always print; info unless
 * quiet; debug when ICPPD_DEBUG is set in the environment.
 */
#ifndef ICPPD_COMMON_LOG_H
#define ICPPD_COMMON_LOG_H

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

void log__set_level(enum log_level max);
void log__msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * One line of progress for work that may take over a second (a
 * report's inference, a long export): written over itself ("\r", then
 * cleared) on stderr when stderr is a terminal and the level shows
 * info, first after PROGRESS_AFTER_NS of the work (log__progress_start)
 * and then at most ten times a second; nothing otherwise, so logs and
 * pipes never see it.  A message clears the line first;
 * log__progress_end() clears it and ends the progress.  Starts nest:
 * the outermost one times the work, and its end ends it.
 */
void log__progress_start(void);
void log__progress(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void log__progress_end(void);

#define log_error(...) log__msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log__msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log__msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log__msg(LOG_DEBUG, __VA_ARGS__)

#endif
