# 2026-01-02 10:00:00 by RouterOS 7.16.1
# software id = ABCD-5678
#
/user-manager
set enabled=yes
/user-manager attribute
add name=Mikrotik-Rate-Limit type-id=8 value-type=string vendor-id=14988
/user-manager limitation
add download-limit=0B name=lim-20M rate-limit-rx=4M rate-limit-tx=20M reset-counters-interval=disabled transfer-limit=100GiB upload-limit=0B uptime-limit=0s
/user-manager profile
add name=fiber-20M name-for-users="Fiber 20M" price=25 starts-when=first-auth validity=30d
/user-manager profile-limitation
add limitation=lim-20M profile=fiber-20M
/user-manager router
add address=10.9.0.2 name=edge shared-secret=um7-secret
/user-manager user
add attributes=Framed-IP-Address:10.60.0.9 group=default name=um7-ann password=um7-pw-1 shared-users=1
add attributes=Mikrotik-Rate-Limit:3M/6M group=default name=um7-ben password=um7-pw-2 shared-users=2
add comment="no password" name=um7-cid
/user-manager user-profile
add profile=fiber-20M user=um7-ann
