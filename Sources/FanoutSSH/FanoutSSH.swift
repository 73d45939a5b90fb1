// FanoutSSH: libssh2 sessions, channels, SFTP and known_hosts on the layer's own I/O thread.
