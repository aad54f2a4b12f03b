/*
 * migrations.h - the ordered schema steps (see migrations.c).
 */
#ifndef ICPPD_SCHEMA_MIGRATIONS_H
#define ICPPD_SCHEMA_MIGRATIONS_H

#include "schema/store.h"

extern const struct store_migration icppd_migrations[];
extern const int icppd_nr_migrations;

#endif
