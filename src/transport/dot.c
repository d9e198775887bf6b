/* dot: DNS over TLS (RFC 7858): TCP's framing (tcp.c) inside the TLS layer conn.c adds for
 * every kind with tls set. */
#include "config.h"

#include "transport/conn.h"

const dv_tp_desc_t dv_tp_dot_desc = {
    .kind = DV_TP_DOT,
    .name = "dot",
    .alias = "tls",
    .long_name = "DNS over TLS",
    .default_port = 853,
    .tls = true,
    .setup_what = "TLS handshake",
    .sock_type = SOCK_STREAM,
    .ops = &dv_tp_framed_ops,
};
