--
-- PostgreSQL database dump
--

-- Dumped from database version 16.4
-- Dumped by pg_dump version 16.4

SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);

CREATE TABLE public.radcheck (
    id integer NOT NULL,
    username text DEFAULT ''::text NOT NULL,
    attribute text DEFAULT ''::text NOT NULL,
    op character varying(2) DEFAULT '=='::character varying NOT NULL,
    value text DEFAULT ''::text NOT NULL
);

ALTER TABLE public.radcheck OWNER TO radius;

--
-- Data for Name: nas; Type: TABLE DATA; Schema: public; Owner: radius
--

COPY public.nas (id, nasname, shortname, type, ports, secret, server, community, description) FROM stdin;
1	10.9.0.1	core-1	other	\N	pg-shared-secret	\N	\N	RADIUS Client
\.

COPY public.radacct (radacctid, acctsessionid, acctuniqueid, username, groupname, realm, nasipaddress, nasportid, nasporttype, acctstarttime, acctupdatetime, acctstoptime, acctinterval, acctsessiontime, acctauthentic, connectinfo_start, connectinfo_stop, acctinputoctets, acctoutputoctets, calledstationid, callingstationid, acctterminatecause, servicetype, framedprotocol, framedipaddress, framedipv6address, framedipv6prefix, framedinterfaceid, delegatedipv6prefix, class) FROM stdin;
1	s-100	u-100	pg-ann	\N		10.9.0.1	15	Ethernet	2026-02-01 10:15:00+00	2026-02-01 10:20:00+00	2026-02-01 11:15:00+00	300	3600	RADIUS	\N	\N	1000	5000	svc	AA:BB:CC:00:00:01	User-Request	Framed-User	PPP	10.40.0.2	\N	\N	\N	\N	\N
2	s-101	u-101	pg-ann	\N		10.9.0.1	15	Ethernet	2026-02-01 10:45:00+02	\N	\N	300	600	RADIUS	\N	\N	10	20	svc	AA:BB:CC:00:00:01		Framed-User	PPP	10.40.0.2	\N	\N	\N	\N	\N
3	s-102	u-102	ghost	\N		10.9.0.9	1	Ethernet	2026-02-02 10:00:00+00	\N	2026-02-02 10:01:00+00	300	60	RADIUS	\N	\N	1	1	svc		NAS-Reboot	Framed-User	PPP		\N	\N	\N	\N	\N
\.

COPY public.radcheck (id, username, attribute, op, value) FROM stdin;
1	pg-ann	Cleartext-Password	:=	tab\there\\back
2	pg-ann	Simultaneous-Use	:=	2
3	pg-bob	Cleartext-Password	:=	\\N literal and \101\x42
4	pg-bob	Expiration	:=	February 01 2027
5	pg-cid	SSHA2-256-Password	:=	LIxUxUSS3lk6ukbn/o44aJ1cM0AjQ2vGuFDalIXUuK5OYUNsIQ==
6	pg-dee	Crypt-Password	:=	$6$saltsalt$qFmFH.bQmmtXzyBY0s9v7Oicd2z4XSIecDzlB5KiA2/jctKu9YterLp8wwnSq.qc.eoxqOmSuNp2xS0ktL3nh/
\.

COPY public.radgroupreply (id, groupname, attribute, op, value) FROM stdin;
1	fiber	Mikrotik-Rate-Limit	:=	10M/50M
\.

COPY public.radpostauth (id, username, pass, reply, authdate, class) FROM stdin;
1	pg-ann		Access-Accept	2026-02-01 10:15:00.123+00	\N
\.

COPY public.radreply (id, username, attribute, op, value) FROM stdin;
1	pg-ann	Framed-IP-Address	=	10.40.0.2
\.

COPY public.radusergroup (id, username, groupname, priority) FROM stdin;
1	pg-ann	fiber	1
2	pg-bob	fiber	1
\.

SELECT pg_catalog.setval('public.radcheck_id_seq', 6, true);

--
-- PostgreSQL database dump complete
--
