/* tls: OpenSSL over a BIO of our own: the handshake, resumption by tickets, records in and out. */
#include "config.h"

#include "transport/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define PLAIN_CHUNK 16384 /* one TLS record of plaintext at most */
/* A handshake holds ~30 KB OpenSSL frees when it ends (its 16 KB message buffer, grown to
 * 21.8 KB, and the 8 KB write-buffering BIO); after a burst of this many at once, the
 * freed memory goes back to the system when the last one ends (malloc_trim). */
#define TRIM_BURST 256
#define CIPHER_MAX ((size_t)1 << 30)

struct dv_tls_ctx {
	SSL_CTX *ssl;
	bool server;
	bool no_resume;
	const char *alpn; /* points into cfg (string literal or caller-owned, outlives ctx) */
	size_t alpn_len;
	SSL_SESSION *session; /* client: the newest resumable session */
	BIO_METHOD *bio;      /* reads the bytes being fed, writes into dv_tls.out */
	uint64_t full, resumed;
	uint32_t hs_now, hs_peak; /* handshakes in progress; their most since the last trim */
};

/*
 * No memory BIOs: OpenSSL reads the ciphertext straight from the caller's buffer
 * during dv_tls_feed (in, in_len) and writes its records straight into out. That
 * saves two copies per record and the two BUF_MEMs a memory BIO pair keeps per
 * connection, grown to the largest chunk ever fed (doc/performance.md, memory per
 * connection). A partial record stays in OpenSSL's own read buffer; bytes it did
 * not take (only when a plaintext callback stops the feed) wait in left.
 */
struct dv_tls {
	dv_tls_ctx_t *c;
	SSL *ssl;
	const uint8_t *in; /* ciphertext being fed, not yet taken by OpenSSL */
	size_t in_len;
	dv_bq_t left;  /* ciphertext fed but not taken: fed first next time */
	dv_bq_t out;   /* ciphertext for the socket */
	dv_bq_t plain; /* plaintext written before the handshake finished */
	size_t out_max;
	bool done, dead, peer_closed, hs_counted;
	char err[160];
};

/* The OpenSSL error queue (and the context) as one sentence in buf. */
static void ssl_reason(char *buf, size_t cap, const char *what)
{
	unsigned long e = ERR_get_error();
	char r[120] = "";

	if (e != 0)
		ERR_error_string_n(e, r, sizeof(r));
	snprintf(buf, cap, "%s%s%s", what, e ? ": " : "", r);
	ERR_clear_error();
}

/* t's handshake ended (done, failed or dropped): the last of a burst trims the heap. */
static void hs_end(dv_tls_t *t)
{
	dv_tls_ctx_t *c = t->c;

	if (!t->hs_counted)
		return;
	t->hs_counted = false;
	if (--c->hs_now > 0 || c->hs_peak < TRIM_BURST)
		return;
	c->hs_peak = 0;
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static int new_session(SSL *ssl, SSL_SESSION *sess)
{
	dv_tls_ctx_t *c = SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl));

	if (c->session != NULL)
		SSL_SESSION_free(c->session);
	c->session = sess; /* returning 1 keeps OpenSSL's reference for us */
	return 1;
}

static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
	dv_tls_ctx_t *c = arg;
	unsigned char *o;

	if (SSL_select_next_proto(&o, outlen, (const unsigned char *)c->alpn, (unsigned)c->alpn_len,
	                          in, inlen) != OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

static int bio_write(BIO *b, const char *data, int len)
{
	dv_tls_t *t = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (len <= 0)
		return 0;
	return dv_bq_put(&t->out, data, (size_t)len) == 0 ? len : -1;
}

static int bio_read(BIO *b, char *buf, int len)
{
	dv_tls_t *t = BIO_get_data(b);
	size_t n = t->in_len < (size_t)len ? t->in_len : (size_t)len;

	BIO_clear_retry_flags(b);
	if (n == 0) { /* nothing more now: "wait", not EOF */
		BIO_set_retry_read(b);
		return -1;
	}
	memcpy(buf, t->in, n);
	t->in += n;
	t->in_len -= n;
	return (int)n;
}

static long bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	dv_tls_t *t = BIO_get_data(b);

	(void)num;
	(void)ptr;
	switch (cmd) {
	case BIO_CTRL_FLUSH:
		return 1;
	case BIO_CTRL_PENDING:
		return (long)t->in_len;
	default:
		return 0;
	}
}

static int bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static BIO_METHOD *bio_method(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "dnsvolley");

	if (m != NULL &&
	    (BIO_meth_set_write(m, bio_write) != 1 || BIO_meth_set_read(m, bio_read) != 1 ||
	     BIO_meth_set_ctrl(m, bio_ctrl) != 1 || BIO_meth_set_create(m, bio_create) != 1)) {
		BIO_meth_free(m);
		m = NULL;
	}
	return m;
}

static int ctx_server(dv_tls_ctx_t *c, const dv_tls_ctx_config_t *cfg, dv_err_t *err)
{
	char r[200];

	if (cfg->cert_file == NULL || cfg->key_file == NULL)
		return dv_err_set(err, -EINVAL, "TLS server: a certificate and a key are needed");
	if (SSL_CTX_use_certificate_chain_file(c->ssl, cfg->cert_file) != 1) {
		ssl_reason(r, sizeof(r), "cannot load");
		return dv_err_set(err, -EINVAL, "certificate %s: %s", cfg->cert_file, r);
	}
	if (SSL_CTX_use_PrivateKey_file(c->ssl, cfg->key_file, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(c->ssl) != 1) {
		ssl_reason(r, sizeof(r), "cannot load");
		return dv_err_set(err, -EINVAL, "key %s: %s", cfg->key_file, r);
	}
	SSL_CTX_set_session_id_context(c->ssl, (const unsigned char *)"dnsvolley", 9);
	if (c->alpn != NULL)
		SSL_CTX_set_alpn_select_cb(c->ssl, alpn_select, c);
	return 0;
}

static int ctx_client(dv_tls_ctx_t *c, const dv_tls_ctx_config_t *cfg, dv_err_t *err)
{
	char r[200];

	if (cfg->ca_file != NULL) {
		if (SSL_CTX_load_verify_locations(c->ssl, cfg->ca_file, NULL) != 1) {
			ssl_reason(r, sizeof(r), "cannot load");
			return dv_err_set(err, -EINVAL, "CA file %s: %s", cfg->ca_file, r);
		}
		SSL_CTX_set_verify(c->ssl, SSL_VERIFY_PEER, NULL);
	} else {
		SSL_CTX_set_verify(c->ssl, SSL_VERIFY_NONE, NULL);
	}
	/* Sessions live in c->session, not in OpenSSL's client cache (it has none). */
	SSL_CTX_set_session_cache_mode(c->ssl,
	                               SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
	SSL_CTX_sess_set_new_cb(c->ssl, new_session);
	if (c->alpn != NULL &&
	    SSL_CTX_set_alpn_protos(c->ssl, (const unsigned char *)c->alpn, (unsigned)c->alpn_len))
		return dv_err_set(err, -ENOMEM, "TLS: cannot set ALPN");
	return 0;
}

int dv_tls_ctx_new(dv_tls_ctx_t **out, const dv_tls_ctx_config_t *cfg, dv_err_t *err)
{
	dv_tls_ctx_t *c = calloc(1, sizeof(*c));
	int rc;

	*out = NULL;
	if (c == NULL)
		return dv_err_set(err, -ENOMEM, "out of memory");
	c->server = cfg->server;
	c->no_resume = cfg->no_resume;
	c->alpn = cfg->alpn;
	c->alpn_len = cfg->alpn_len;
	c->ssl = SSL_CTX_new(cfg->server ? TLS_server_method() : TLS_client_method());
	c->bio = bio_method();
	if (c->ssl == NULL || c->bio == NULL) {
		rc = dv_err_set(err, -ENOMEM, "TLS: cannot create a context");
		goto out;
	}
	SSL_CTX_set_app_data(c->ssl, c);
	SSL_CTX_set_min_proto_version(c->ssl, cfg->min_version ? cfg->min_version : TLS1_2_VERSION);
	SSL_CTX_set_max_proto_version(c->ssl, cfg->max_version);
	/* Partial writes never happen (writes go to a byte queue); keep the buffer anyway.
	 * DoH keeps OpenSSL's buffers and reads ahead (doc/performance.md, DoH). */
	SSL_CTX_set_mode(c->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE |
	                             (cfg->keep_buffers ? 0 : SSL_MODE_RELEASE_BUFFERS));
	SSL_CTX_set_read_ahead(c->ssl, cfg->keep_buffers);
	rc = cfg->server ? ctx_server(c, cfg, err) : ctx_client(c, cfg, err);
	if (rc == 0)
		*out = c;
out:
	if (rc != 0)
		dv_tls_ctx_free(c);
	ERR_clear_error();
	return rc;
}

void dv_tls_ctx_free(dv_tls_ctx_t *c)
{
	if (c == NULL)
		return;
	if (c->session != NULL)
		SSL_SESSION_free(c->session);
	SSL_CTX_free(c->ssl);
	BIO_meth_free(c->bio);
	free(c);
}

void dv_tls_ctx_counts(const dv_tls_ctx_t *c, uint64_t *full, uint64_t *resumed)
{
	*full = c->full;
	*resumed = c->resumed;
}

static bool is_ip_literal(const char *s)
{
	uint8_t a[16];
	return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

int dv_tls_new(dv_tls_t **out, dv_tls_ctx_t *c, const char *sni, size_t out_max)
{
	dv_tls_t *t = calloc(1, sizeof(*t));
	BIO *bio;
	int rc = -ENOMEM;

	*out = NULL;
	if (t == NULL)
		return -ENOMEM;
	t->c = c;
	t->out_max = out_max;
	dv_bq_init(&t->out, CIPHER_MAX);
	dv_bq_init(&t->left, CIPHER_MAX);
	dv_bq_init(&t->plain, out_max);
	t->ssl = SSL_new(c->ssl);
	bio = BIO_new(c->bio);
	if (t->ssl == NULL || bio == NULL) {
		BIO_free(bio);
		goto out;
	}
	BIO_set_data(bio, t);
	SSL_set_bio(t->ssl, bio, bio); /* one reference, owned by ssl */
	t->hs_counted = true;
	if (++c->hs_now > c->hs_peak)
		c->hs_peak = c->hs_now;
	if (c->server) {
		SSL_set_accept_state(t->ssl);
	} else {
		SSL_set_connect_state(t->ssl);
		if (sni != NULL && !is_ip_literal(sni))
			SSL_set_tlsext_host_name(t->ssl, sni);
		if (sni != NULL && SSL_CTX_get_verify_mode(c->ssl) != SSL_VERIFY_NONE)
			SSL_set1_host(t->ssl, sni);
		if (c->session != NULL && !c->no_resume && SSL_SESSION_is_resumable(c->session))
			SSL_set_session(t->ssl, c->session);
		if (SSL_do_handshake(t->ssl) != 1 && dv_bq_len(&t->out) == 0)
			goto out; /* no ClientHello */
	}
	rc = 0;
	*out = t;
out:
	ERR_clear_error();
	if (rc != 0)
		dv_tls_free(t);
	return rc;
}

void dv_tls_free(dv_tls_t *t)
{
	if (t == NULL)
		return;
	/* OpenSSL marks the session of a connection freed without a shutdown as not
	 * resumable; a connection the engine drops (reset, timeout, end of run) still
	 * leaves a good ticket. A connection that died of a TLS error does not. */
	if (t->ssl != NULL && !t->dead)
		SSL_set_shutdown(t->ssl, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
	SSL_free(t->ssl); /* frees the BIO */
	hs_end(t);
	dv_bq_free(&t->out);
	dv_bq_free(&t->left);
	dv_bq_free(&t->plain);
	free(t);
}

static int fail(dv_tls_t *t, const char *what)
{
	ssl_reason(t->err, sizeof(t->err), what);
	t->dead = true;
	return -EPROTO;
}

/* Encrypt data into t->out. */
static int encrypt(dv_tls_t *t, const uint8_t *data, size_t len)
{
	while (len > 0) {
		int n = SSL_write(t->ssl, data, len > PLAIN_CHUNK ? PLAIN_CHUNK : (int)len);
		if (n <= 0)
			return fail(t, "TLS write failed");
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

static int handshake(dv_tls_t *t)
{
	int rc = SSL_do_handshake(t->ssl);

	if (rc != 1) {
		int e = SSL_get_error(t->ssl, rc);
		if (e == SSL_ERROR_WANT_READ)
			return 0;
		if (e == SSL_ERROR_SSL && SSL_get_verify_result(t->ssl) != X509_V_OK) {
			snprintf(t->err, sizeof(t->err), "TLS handshake failed: certificate: %s",
			         X509_verify_cert_error_string(SSL_get_verify_result(t->ssl)));
			ERR_clear_error();
			t->dead = true;
			return -EPROTO;
		}
		return fail(t, "TLS handshake failed");
	}
	t->done = true;
	hs_end(t);
	if (SSL_session_reused(t->ssl))
		t->c->resumed++;
	else
		t->c->full++;
	rc = 0;
	if (dv_bq_len(&t->plain) > 0) {
		rc = encrypt(t, dv_bq_data(&t->plain), dv_bq_len(&t->plain));
		dv_bq_free(&t->plain);
	}
	return rc;
}

/* Read every plaintext byte OpenSSL can give now. */
static int read_plain(dv_tls_t *t, dv_tls_plain_fn fn, void *ctx)
{
	uint8_t buf[PLAIN_CHUNK];

	for (;;) {
		int n = SSL_read(t->ssl, buf, sizeof(buf)), rc;
		if (n <= 0) {
			int e = SSL_get_error(t->ssl, n);
			if (e == SSL_ERROR_WANT_READ)
				return 0;
			if (e == SSL_ERROR_ZERO_RETURN) {
				t->peer_closed = true;
				return 0;
			}
			return fail(t, "TLS read failed");
		}
		rc = fn(ctx, buf, (size_t)n);
		if (rc < 0)
			return rc;
	}
}

int dv_tls_feed(dv_tls_t *t, const uint8_t *data, size_t len, dv_tls_plain_fn fn, void *ctx)
{
	bool held = dv_bq_len(&t->left) > 0;
	int rc;

	if (t->dead)
		return -EPROTO;
	if (held && dv_bq_put(&t->left, data, len) != 0)
		return -ENOMEM;
	t->in = held ? dv_bq_data(&t->left) : data;
	t->in_len = held ? dv_bq_len(&t->left) : len;
	if (!t->done) {
		rc = handshake(t);
		if (rc != 0 || !t->done)
			goto out;
	}
	rc = t->peer_closed ? 0 : read_plain(t, fn, ctx);
out:
	/* What OpenSSL did not take (fn stopped the feed) is fed first next time. */
	if (held)
		dv_bq_consume(&t->left, dv_bq_len(&t->left) - t->in_len);
	else if (t->in_len > 0 && !t->dead && dv_bq_put(&t->left, t->in, t->in_len) != 0)
		rc = rc < 0 ? rc : -ENOMEM;
	t->in = NULL;
	t->in_len = 0;
	ERR_clear_error();
	return rc;
}

size_t dv_tls_room(const dv_tls_t *t)
{
	size_t used = dv_bq_len(&t->out) + dv_bq_len(&t->plain);
	return used >= t->out_max ? 0 : t->out_max - used;
}

int dv_tls_write(dv_tls_t *t, const uint8_t *data, size_t len)
{
	int rc;

	if (t->dead)
		return -EPROTO;
	if (len > dv_tls_room(t))
		return -ENOBUFS;
	if (!t->done)
		return dv_bq_put(&t->plain, data, len);
	rc = encrypt(t, data, len);
	ERR_clear_error();
	return rc;
}

dv_bq_t *dv_tls_out(dv_tls_t *t)
{
	return &t->out;
}

void dv_tls_close(dv_tls_t *t)
{
	if (!t->dead && t->done)
		SSL_shutdown(t->ssl);
	ERR_clear_error();
}

bool dv_tls_handshake_done(const dv_tls_t *t)
{
	return t->done;
}

bool dv_tls_resumed(const dv_tls_t *t)
{
	return t->done && SSL_session_reused(t->ssl);
}

bool dv_tls_peer_closed(const dv_tls_t *t)
{
	return t->peer_closed;
}

const char *dv_tls_version(const dv_tls_t *t)
{
	return t->done ? SSL_get_version(t->ssl) : NULL;
}

bool dv_tls_alpn_is(const dv_tls_t *t, const char *proto)
{
	const unsigned char *p = NULL;
	unsigned n = 0;

	SSL_get0_alpn_selected(t->ssl, &p, &n);
	return p != NULL && n == strlen(proto) && memcmp(p, proto, n) == 0;
}

const char *dv_tls_sni(const dv_tls_t *t)
{
	return SSL_get_servername(t->ssl, TLSEXT_NAMETYPE_host_name);
}

const char *dv_tls_error(const dv_tls_t *t)
{
	return t->err;
}
