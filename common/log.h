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

#define log_error(...) log__msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log__msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log__msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log__msg(LOG_DEBUG, __VA_ARGS__)

#endif
