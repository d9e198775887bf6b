/* escape: text escaping for XML/HTML files (JUnit, plot index) and for the terminal. */
#include "config.h"

#include "base/escape.h"

#include <stdlib.h>
#include <string.h>

void dv_xml_escape(FILE *out, const char *s)
{
	if (s == NULL)
		return;
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		switch (ch) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			if (ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r')
				fputc('?', out);
			else
				fputc(ch, out);
		}
	}
}

/* Bytes of the control character at p (1, or 2 for a UTF-8 C1 control), 0 when none. */
static size_t term_control_len(const unsigned char *p)
{
	if (*p < 0x20 || *p == 0x7f)
		return 1;
	if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
		return 2;
	return 0;
}

bool dv_term_needs_escape(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; s != NULL && *p != '\0'; p++)
		if (term_control_len(p) != 0)
			return true;
	return false;
}

char *dv_term_escape(const char *s)
{
	const unsigned char *p;
	char *out, *o;

	if (s == NULL)
		return NULL;
	out = malloc(strlen(s) * 6 + 1); /* at most "\xHH" per byte, "\uHHHH" per 2 bytes */
	if (out == NULL)
		return NULL;
	o = out;
	for (p = (const unsigned char *)s; *p != '\0'; p++) {
		switch (term_control_len(p)) {
		case 1:
			o += sprintf(o, "\\x%02x", *p);
			break;
		case 2:
			o += sprintf(o, "\\u%04x", p[1]);
			p++;
			break;
		default:
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}
