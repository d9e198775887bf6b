/* escape: text escaping for the files dnsvolley writes (XML and HTML: JUnit, plot index) and for
 * the terminal (labels read from results files). */
#ifndef DV_ESCAPE_H
#define DV_ESCAPE_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Write s escaped for XML/HTML text and attribute values: & < > " ' become
 * entities; control characters that XML 1.0 forbids (all below 0x20 but tab,
 * newline and carriage return) become '?'. NULL writes nothing.
 */
void dv_xml_escape(FILE *out, const char *s);

/*
 * s made safe to print on a terminal: every control character (below 0x20 and 0x7f) becomes
 * \xHH, and every C1 control in UTF-8 (U+0080..U+009F, which terminals obey like ESC
 * sequences) becomes \uHHHH; everything else is copied. Returns a malloc'ed string (the
 * caller frees it), NULL for NULL or when out of memory.
 */
char *dv_term_escape(const char *s);

/* True when s holds something dv_term_escape would change. */
bool dv_term_needs_escape(const char *s);

#endif
