# nov/20/2026 10:00:00 by RouterOS 6.49.10
# software id = ABCD-1234
#
/ppp profile
add name=10M only-one=yes rate-limit=2M/10M
add name=20M rate-limit="5M/20M 6M/25M 4M/16M 8/8"
/ppp secret
add name=mt-ann password=ann-pw profile=10M remote-address=10.30.0.2 service=pppoe
add comment="moved \"north\"" disabled=yes name=mt-ben password="ben pw" \
    profile=20M service=pppoe
add name=mt-cid password=cid-pw profile=default
add name=mt-dee profile=10M
