/*
** format.c -- formatting shared by the commands: times, escaped previews
** and JSON values (jansson), printed compact with keys in a fixed order.
*/
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Write microseconds since the epoch as ISO-8601 UTC into out (CLI_TIME_SIZE
** bytes), with the microseconds when micros is set. */
void cli_format_time(int64_t us, int micros, char *out) {
  time_t secs = (time_t)(us / 1000000);
  long frac = (long)(us % 1000000);
  struct tm tm;
  size_t len;
  if (frac < 0) {
    secs--;
    frac += 1000000;
  }
  gmtime_r(&secs, &tm);
  len = strftime(out, CLI_TIME_SIZE - 9, "%Y-%m-%dT%H:%M:%S", &tm);
  if (micros) {
    snprintf(out + len, CLI_TIME_SIZE - len, ".%06ldZ", frac);
  } else {
    snprintf(out + len, CLI_TIME_SIZE - len, "Z");
  }
}

/* The escape of byte c that is a backslash and one letter ("\\n" for a
** newline), or NULL when c has none. */
static const char *short_escape(unsigned char c) {
  static const char bytes[] = "\\\n\t\r";
  static const char *const escapes[] = {"\\\\", "\\n", "\\t", "\\r"};
  const char *at = memchr(bytes, c, sizeof bytes - 1);
  return at != NULL ? escapes[at - bytes] : NULL;
}

/* Write len bytes of p into out as printable ASCII: a backslash, \n, \t,
** \r and every byte outside 0x20..0x7e are escaped.  Stops before max
** bytes of output and ends with "..." when cut.  out needs max + 4 bytes.
** Returns the length written. */
size_t cli_escape(const unsigned char *p, size_t len, size_t max, char *out) {
  size_t i, o = 0;
  for (i = 0; i < len; i++) {
    char one[5];
    size_t n;
    const char *esc = short_escape(p[i]);
    if (esc != NULL) {
      n = (size_t)snprintf(one, sizeof one, "%s", esc);
    } else {
      n = p[i] >= 0x20 && p[i] < 0x7f ? (size_t)snprintf(one, sizeof one, "%c", p[i])
                                      : (size_t)snprintf(one, sizeof one, "\\x%02x", p[i]);
    }
    if (o + n > max) {
      memcpy(out + o, "...", 3);
      o += 3;
      break;
    }
    memcpy(out + o, one, n);
    o += n;
  }
  out[o] = '\0';
  return o;
}

const char *cli_name(const char *s, char *out) {
  cli_escape((const unsigned char *)s, strlen(s), CLI_NAME_SIZE - 4, out);
  return out;
}

/* A JSON string for s, NULL for none.  Text that is not UTF-8 is given with
** \xHH escapes. */
json_t *cli_json_text(const char *s) {
  json_t *j;
  size_t len;
  char *esc;
  if (s == NULL) {
    return json_null();
  }
  if ((j = json_string(s)) != NULL) {
    return j;
  }
  len = strlen(s);
  esc = malloc(len * 4 + 4);
  if (esc == NULL) {
    return NULL;
  }
  cli_escape((const unsigned char *)s, len, len * 4, esc);
  j = json_string(esc);
  free(esc);
  return j;
}

/* A JSON string of the standard base64 encoding of len bytes of p. */
size_t cli_base64(const unsigned char *p, size_t len, char *out) {
  const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t i, o = 0;
  for (i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16;
    if (i + 1 < len) {
      v |= (uint32_t)p[i + 1] << 8;
    }
    if (i + 2 < len) {
      v |= p[i + 2];
    }
    out[o++] = digits[(v >> 18) & 63];
    out[o++] = digits[(v >> 12) & 63];
    out[o++] = i + 1 < len ? digits[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < len ? digits[v & 63] : '=';
  }
  out[o] = '\0';
  return o;
}

json_t *cli_json_base64(const unsigned char *p, size_t len) {
  char *out = malloc(CLI_BASE64_SIZE(len));
  json_t *j;
  if (out == NULL) {
    return NULL;
  }
  cli_base64(p, len, out);
  j = json_string(out);
  free(out);
  return j;
}

/* Print value (which this takes) compact, keys in insertion order, and a
** newline.  Returns the exit code. */
int cli_print_json(json_t *value) {
  char *text = value ? json_dumps(value, JSON_PRESERVE_ORDER | JSON_COMPACT) : NULL;
  json_decref(value);
  if (text == NULL) {
    cli_error("out of memory");
    return EXIT_SOFTWARE;
  }
  puts(text);
  free(text);
  return 0;
}

void cli_json_set_payload(json_t *o, const unsigned char *p, size_t len) {
  json_t *text = json_stringn((const char *)p, len);
  if (text != NULL) {
    json_object_set_new(o, "payload", text);
  } else {
    json_object_set_new(o, "payload_base64", cli_json_base64(p, len));
  }
}
