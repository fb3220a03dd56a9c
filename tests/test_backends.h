/*
** test_backends.h -- which server backends this build has, as set by
** tests/CMakeLists.txt from the SQLQ_WITH_* options (0 when not set).
*/
#ifndef SQLQ_TEST_BACKENDS_H
#define SQLQ_TEST_BACKENDS_H

#ifndef SQLQ_TEST_HAVE_POSTGRES
#define SQLQ_TEST_HAVE_POSTGRES 0
#endif
#ifndef SQLQ_TEST_HAVE_MYSQL
#define SQLQ_TEST_HAVE_MYSQL 0
#endif
#ifndef SQLQ_TEST_HAVE_FIREBIRD
#define SQLQ_TEST_HAVE_FIREBIRD 0
#endif

#endif
