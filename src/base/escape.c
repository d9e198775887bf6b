/* escape: text escaping for the files dnsvolley writes (XML and HTML: JUnit, plot index). */
#include "config.h"

#include "base/escape.h"

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
