/* selfsigned: a self-signed certificate for "dnsvolley.test" made with the OpenSSL API, as PEM
 * files. */
#ifndef DV_TEST_SELFSIGNED_H
#define DV_TEST_SELFSIGNED_H

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct selfsigned {
	char cert[64], key[64];
} selfsigned_t;

static int pem_file(char *path, X509 *x, EVP_PKEY *k)
{
	int fd = mkstemp(path), ok;
	FILE *f;

	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	if (f == NULL)
		return -1;
	ok = x ? PEM_write_X509(f, x) : PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL);
	return fclose(f) == 0 && ok == 1 ? 0 : -1;
}

/* An EC P-256 key and a certificate valid for a day with SAN DNS:dnsvolley.test. */
static int selfsigned_make(selfsigned_t *s)
{
	EVP_PKEY *k = EVP_EC_gen("P-256");
	X509 *x = X509_new();
	X509_NAME *name;
	X509_EXTENSION *ext;
	X509V3_CTX v3;
	int rc = -1;

	snprintf(s->cert, sizeof(s->cert), "/tmp/dv-test-cert-XXXXXX");
	snprintf(s->key, sizeof(s->key), "/tmp/dv-test-key-XXXXXX");
	if (k == NULL || x == NULL)
		goto out;
	X509_set_version(x, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
	X509_gmtime_adj(X509_getm_notBefore(x), -60);
	X509_gmtime_adj(X509_getm_notAfter(x), 86400);
	X509_set_pubkey(x, k);
	name = X509_get_subject_name(x);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
	                           (const unsigned char *)"dnsvolley.test", -1, -1, 0);
	X509_set_issuer_name(x, name);
	X509V3_set_ctx(&v3, x, x, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &v3, NID_subject_alt_name, "DNS:dnsvolley.test");
	if (ext == NULL || !X509_add_ext(x, ext, -1))
		goto out;
	X509_EXTENSION_free(ext);
	if (X509_sign(x, k, EVP_sha256()) <= 0)
		goto out;
	if (pem_file(s->cert, x, NULL) == 0 && pem_file(s->key, NULL, k) == 0)
		rc = 0;
out:
	X509_free(x);
	EVP_PKEY_free(k);
	return rc;
}

static void selfsigned_remove(selfsigned_t *s)
{
	unlink(s->cert);
	unlink(s->key);
}

#endif
