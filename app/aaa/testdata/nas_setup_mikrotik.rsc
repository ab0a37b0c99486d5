# xr RADIUS setup for NAS "core-1" (192.0.2.10), RouterOS 7.
# Paste into the router's terminal, or import it as an .rsc file.
#
# <NAS-SECRET>: replace it with the shared secret entered for this NAS in xr.
# xr never shows a secret again (it is write-only); to change it, PATCH the NAS.
#
# xr knows this router by the source address 192.0.2.10: RADIUS packets must come
# from it (add src-address=192.0.2.10 to the next line if the router has several).
/radius
add service=ppp,hotspot,login address=203.0.113.5 secret="<NAS-SECRET>" authentication-port=1812 accounting-port=1813 timeout=3s comment=xr
# "login" only matters with /user aaa use-radius=yes: leave that off, subscribers
# are not router administrators.
# Message-Authenticator (RFC 3579, BlastRADIUS CVE-2024-3596): RouterOS 7.15 and
# later sign Access-Requests and demand signed answers with the next line; older
# versions reject it (upgrade, or set require_message_authenticator=false on
# this NAS in xr: xr drops its Access-Requests without one).
set [find comment=xr] require-message-auth=yes-for-request-resp
# Disconnect and CoA from xr (RFC 5176) arrive on UDP 3799.
/radius incoming
set accept=yes port=3799
# PPP (PPPoE, L2TP, SSTP, ...): RADIUS authentication and accounting, interim
# updates every 300 s.
/ppp aaa
set use-radius=yes accounting=yes interim-update=5m
# Hotspot: every server profile uses RADIUS with the same interim interval.
/ip hotspot profile
set [find] use-radius=yes radius-accounting=yes radius-interim-update=5m
