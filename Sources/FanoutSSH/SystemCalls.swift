#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// libc functions that members of our own types shadow (`LocalFiles.read`, `TCPConnector.connect`). Inside those
// types they would need a module-qualified name, which differs between Glibc and Darwin; at file scope here the
// plain names reach libc on both.

func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, buffer, count)
}

func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
