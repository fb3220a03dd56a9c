# The native addon, built against libsqlq: its header from SQLQ_INCLUDE_DIR
# and its library (libsqlq.so, or the static libsqlq.a of a CMake build)
# from SQLQ_LIB_DIR; both default to the system's.  SQLQ_LIBS replaces the
# libraries linked: a static libsqlq built with -DSQLQ_DLOPEN=OFF needs its
# client libraries as well, SQLQ_LIBS="$(pkg-config --libs --static sqlq)".
{
  "variables": {
    "sqlq_include_dir%": "<!(node -p \"process.env.SQLQ_INCLUDE_DIR || ''\")",
    "sqlq_lib_dir%": "<!(node -p \"process.env.SQLQ_LIB_DIR || ''\")"
  },
  "targets": [
    {
      "target_name": "sqlq",
      "sources": ["src/sqlq_node.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
      "conditions": [
        ["sqlq_include_dir!=''", {"include_dirs": ["<(sqlq_include_dir)"]}],
        ["sqlq_lib_dir!=''", {
          "libraries": ["-L<(sqlq_lib_dir)", "-Wl,-rpath,<(sqlq_lib_dir)"]
        }]
      ],
      "libraries": ["<!@(node -p \"process.env.SQLQ_LIBS || '-lsqlq -lsqlite3 -ldl -lpthread -lm'\")"]
    }
  ]
}
