/* empty.c -- the one source of sqlq_python_lib, the shared libsqlq.so.1 that
** tests/CMakeLists.txt links from the whole static libsqlq for the Python
** package's tests: every object comes from the archive. */
typedef int sqlq__python_lib_empty;
