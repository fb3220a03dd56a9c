/*
** hello_sqlite.c -- the baseline of bench/startup.sh: a program that links
** only libsqlite3 (and libc) and prints SQLite's version, as `sqlq
** --version` prints sqlq's.  What it costs to start is what any program
** using SQLite pays; sqlq's start-up is measured against it.
*/
#include <sqlite3.h>
#include <stdio.h>

int main(void) {
  printf("sqlite %s\n", sqlite3_libversion());
  return 0;
}
