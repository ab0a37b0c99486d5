# xr RadSec setup for NAS "core-1", RouterOS 7: RADIUS over TLS (RFC 6614).
# The router connects to 203.0.113.5 on TCP 2083 with its own client certificate;
# xr knows it by that certificate, from whatever address it connects.
#
# 1. Get the router's files once (xr keeps no copy of the key):
#      xr nas radsec-cert --tenant acme --name "core-1" --out ./core-1
#    or Issue and Download on the NAS page in xr; upload client.pem, client.key and
#    ca.pem to the router (Files).
# 2. Import them; the key joins the certificate with the same public key.
/certificate import file-name=ca.pem passphrase="" name=xr-ca
/certificate import file-name=client.pem passphrase="" name=xr-core-1
/certificate import file-name=client.key passphrase=""
# 3. RADIUS over RadSec. The secret is fixed by RFC 6614: radsec. wireless and
#    dot1x let Wi-Fi (WPA2/WPA3-Enterprise: PEAP, TTLS) sign in through xr too.
/radius
add service=ppp,hotspot,wireless,dot1x address=203.0.113.5 protocol=radsec certificate=xr-core-1 secret=radsec authentication-port=2083 accounting-port=2083 timeout=3s comment=xr
# Disconnect and CoA from xr come over the same connection while it is up.
/radius incoming
set accept=yes
# PPP (PPPoE, L2TP, SSTP, ...): RADIUS authentication and accounting, interim
# updates every 300 s.
/ppp aaa
set use-radius=yes accounting=yes interim-update=5m
# Hotspot: every server profile uses RADIUS with the same interim interval.
/ip hotspot profile
set [find] use-radius=yes radius-accounting=yes radius-interim-update=5m
