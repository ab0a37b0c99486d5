# jan/02/2026 10:00:00 by RouterOS 6.49.10
# software id = ABCD-1234
#
/tool user-manager customer
set admin access=own-routers,own-users,own-profiles,own-limits,config-payment-gw
/tool user-manager profile
add name=home-10M name-for-users="Home 10M" override-shared-users=off owner=admin price=150 starts-at=logon validity=4w2d
add name=biz owner=admin override-shared-users=3 price=0 starts-at=logon validity=0s
add name=hourly owner=admin price=1.5 starts-at=logon validity=12h
add name=forever owner=admin validity=99999w
/tool user-manager profile limitation
add address-list="" download-limit=0B group-name="" ip-pool="" name=lim-10M owner=admin rate-limit-rx=2M rate-limit-tx=10M transfer-limit=50G upload-limit=0B uptime-limit=0s
add name=lim-biz owner=admin rate-limit-rx=20M rate-limit-tx=20M uptime-limit=100h
/tool user-manager profile profile-limitation
add from-time=0s limitation=lim-10M profile=home-10M till-time=23h59m59s weekdays=sunday,monday,tuesday,wednesday,thursday,friday,saturday
add limitation=lim-biz profile=biz
/tool user-manager router
add coa-port=1700 customer=admin disabled=no ip-address=10.9.0.1 log=auth-fail name=core shared-secret=um-secret use-coa=no
/tool user-manager user
add customer=admin disabled=no ip-address=10.50.0.2 password=um6-pw-1 shared-users=1 username=um6-ann wireless-enc-algo=none wireless-enc-key="" wireless-psk=""
add customer=admin disabled=yes password="with space" shared-users=2 \
    username=um6-ben
add customer=admin username=um6-cid shared-users=1
create-and-activate-profile customer=admin numbers=um6-ann profile=home-10M
create-and-activate-profile customer=admin numbers=um6-ben profile=biz
