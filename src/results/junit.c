/* junit: JUnit XML (the subset Jenkins, GitLab and GitHub reporters read) written through
 * atomicfile. */
#include "config.h"

#include "results/junit.h"

#include "base/atomicfile.h"
#include "base/escape.h"

int dv_junit_write(const char *path, const char *suite, const dv_junit_case_t *cases, size_t n,
                   dv_err_t *err)
{
	dv_atomicfile_t f;
	size_t failures = 0, skipped = 0;
	int rc = dv_atomicfile_open(&f, path, false, err);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		failures += cases[i].failed;
		skipped += !cases[i].failed && cases[i].skipped;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f.fp);
	fprintf(f.fp, "<testsuites tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n",
	        n, failures, skipped);
	fputs("  <testsuite name=\"", f.fp);
	dv_xml_escape(f.fp, suite);
	fprintf(f.fp, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\">\n", n,
	        failures, skipped);
	for (size_t i = 0; i < n; i++) {
		const dv_junit_case_t *c = &cases[i];

		fputs("    <testcase classname=\"", f.fp);
		dv_xml_escape(f.fp, c->classname);
		fputs("\" name=\"", f.fp);
		dv_xml_escape(f.fp, c->name);
		fputs("\" time=\"0\"", f.fp);
		if (!c->failed && !c->skipped) {
			fputs("/>\n", f.fp);
			continue;
		}
		fputs(">\n", f.fp);
		if (c->failed) {
			fputs("      <failure type=\"gate\" message=\"", f.fp);
			dv_xml_escape(f.fp, c->message);
			fputs("\">", f.fp);
			dv_xml_escape(f.fp, c->message);
			fputs("</failure>\n", f.fp);
		} else {
			fputs("      <skipped message=\"", f.fp);
			dv_xml_escape(f.fp, c->message);
			fputs("\"/>\n", f.fp);
		}
		fputs("    </testcase>\n", f.fp);
	}
	fputs("  </testsuite>\n</testsuites>\n", f.fp);
	return dv_atomicfile_commit(&f, err);
}
