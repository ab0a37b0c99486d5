-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)
--
-- Host: localhost    Database: radius
-- ------------------------------------------------------
-- Server version	8.0.36

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET NAMES utf8mb4 */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;

--
-- Table structure for table `nas`
--

DROP TABLE IF EXISTS `nas`;
CREATE TABLE `nas` (
  `id` int NOT NULL AUTO_INCREMENT,
  `nasname` varchar(128) NOT NULL,
  `shortname` varchar(32) DEFAULT NULL,
  `type` varchar(30) DEFAULT 'other',
  `ports` int DEFAULT NULL,
  `secret` varchar(60) NOT NULL DEFAULT 'secret',
  `server` varchar(64) DEFAULT NULL,
  `community` varchar(50) DEFAULT NULL,
  `description` varchar(200) DEFAULT 'RADIUS Client',
  PRIMARY KEY (`id`),
  KEY `nasname` (`nasname`)
) ENGINE=InnoDB AUTO_INCREMENT=3 DEFAULT CHARSET=utf8mb4;

LOCK TABLES `nas` WRITE;
/*!40000 ALTER TABLE `nas` DISABLE KEYS */;
INSERT INTO `nas` VALUES (1,'10.9.0.1','core-1','other',NULL,'s3cr3t-shared-key',NULL,NULL,'RADIUS Client'),(2,'10.9.0.2','edge; two','other',NULL,'another-secret-key',NULL,NULL,'it\'s \"quoted\"');
/*!40000 ALTER TABLE `nas` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `radcheck`
--

DROP TABLE IF EXISTS `radcheck`;
CREATE TABLE `radcheck` (
  `id` int unsigned NOT NULL AUTO_INCREMENT,
  `username` varchar(64) NOT NULL DEFAULT '',
  `attribute` varchar(64) NOT NULL DEFAULT '',
  `op` char(2) NOT NULL DEFAULT '==',
  `value` varchar(253) NOT NULL DEFAULT '',
  PRIMARY KEY (`id`),
  KEY `username` (`username`(32))
) ENGINE=InnoDB AUTO_INCREMENT=20 DEFAULT CHARSET=utf8mb4;

LOCK TABLES `radcheck` WRITE;
/*!40000 ALTER TABLE `radcheck` DISABLE KEYS */;
INSERT INTO `radcheck` VALUES (1,'alice','Cleartext-Password',':=','al;ice\'s pw'),(2,'alice','Expiration',':=','January 31 2027 12:00:00'),(3,'alice','Simultaneous-Use',':=','1'),
(4,'bob','Cleartext-Password',':=','back\\slash'),(5,'bob','Auth-Type',':=','Reject'),
(6,'carol','MD5-Password',':=','5f4dcc3b5aa765d61d8327deb882cf99'),
(7,'dave','Cleartext-Password',':=','dave-pw'),(8,'dave','Expiration',':=','not a date'),
(9,'erin','Cleartext-Password',':=','erin-pw'),(10,'erin','Idle-Timeout',':=','600');
INSERT INTO `radcheck` (`username`, `attribute`, `op`, `value`) VALUES ('frank','Cleartext-Password',':=','fr\"ank'),('frank','Expiration',':=','05 Mar 2027');
INSERT INTO `radcheck` VALUES (11,'gina','Crypt-Password',':=','$y$j9T$F5Jx5fExrKuJdUYqS1Wv0.$1vN6DwfmwY70eSy8F0LznewUNGgawEDicCXeiCeMyl7'),(12,'hank','Cleartext-Password',':=','h\0\n\t\Zx');
/*!40000 ALTER TABLE `radcheck` ENABLE KEYS */;
UNLOCK TABLES;

DROP TABLE IF EXISTS `radgroupcheck`;
LOCK TABLES `radgroupcheck` WRITE;
INSERT INTO `radgroupcheck` VALUES (1,'gold','Simultaneous-Use',':=','2'),(2,'gold','Max-Total-Octets',':=','53687091200');
UNLOCK TABLES;

DROP TABLE IF EXISTS `radgroupreply`;
LOCK TABLES `radgroupreply` WRITE;
INSERT INTO `radgroupreply` VALUES (1,'gold','Mikrotik-Rate-Limit',':=','5M/20M'),(2,'silver','Mikrotik-Rate-Limit',':=','2M/8M 4M/16M 1M/4M 10/10'),(3,'silver','Framed-Pool',':=','pool1');
UNLOCK TABLES;

DROP TABLE IF EXISTS `radreply`;
LOCK TABLES `radreply` WRITE;
INSERT INTO `radreply` VALUES (1,'alice','Framed-IP-Address','=','10.20.0.5'),(2,'erin','Mikrotik-Rate-Limit','=','1M/3M');
UNLOCK TABLES;

DROP TABLE IF EXISTS `radusergroup`;
CREATE TABLE `radusergroup` (
  `id` int unsigned NOT NULL AUTO_INCREMENT,
  `username` varchar(64) NOT NULL DEFAULT '',
  `groupname` varchar(64) NOT NULL DEFAULT '',
  `priority` int NOT NULL DEFAULT '1',
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
LOCK TABLES `radusergroup` WRITE;
INSERT INTO `radusergroup` VALUES (1,'alice','gold',1),(2,'bob','silver',1),(3,'frank','silver',2),(4,'frank','gold',1),(5,'hank','silver',1);
UNLOCK TABLES;

DROP TABLE IF EXISTS `radacct`;
LOCK TABLES `radacct` WRITE;
INSERT INTO `radacct` VALUES (1,'8100001','a1b2','alice','','10.9.0.1','15','Ethernet','2026-01-01 10:00:00','2026-01-01 10:05:00','2026-01-01 11:00:00',300,3600,'RADIUS','','',1000,2000,'svc','AA:BB:CC:DD:EE:01','User-Request','Framed-User','PPP','10.20.0.5','','','','',NULL,NULL),(2,'8100002','a1b3','bob','','10.9.0.1','16','Ethernet','2026-01-02 10:00:00',NULL,NULL,300,60,'RADIUS','','',1,2,'svc','AA:BB:CC:DD:EE:02','','Framed-User','PPP','10.20.0.6','','','','',NULL,NULL);
UNLOCK TABLES;

DROP TABLE IF EXISTS `radpostauth`;
LOCK TABLES `radpostauth` WRITE;
INSERT INTO `radpostauth` VALUES (1,'alice','','Access-Accept','2026-01-01 10:00:00.000000',NULL),(2,'bob','','Access-Reject','2026-01-02 10:00:00.000000',NULL);
UNLOCK TABLES;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;

-- Dump completed on 2026-11-20 10:00:00
