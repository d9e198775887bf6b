/* escape: text escaping for the files dnsvolley writes (XML and HTML: JUnit, plot index). */
#ifndef DV_ESCAPE_H
#define DV_ESCAPE_H

#include <stdio.h>

/*
 * Write s escaped for XML/HTML text and attribute values: & < > " ' become
 * entities; control characters that XML 1.0 forbids (all below 0x20 but tab,
 * newline and carriage return) become '?'. NULL writes nothing.
 */
void dv_xml_escape(FILE *out, const char *s);

#endif
