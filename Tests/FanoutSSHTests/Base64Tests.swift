@testable import FanoutSSH
import Testing

/// The inputs on which Foundation's own decoder would differ from what key files need (see `Base64.decode`).
@Suite(.timeLimit(.minutes(1))) struct Base64Tests {
    private let foobar = Array("foobar".utf8)
    private let fooba = Array("fooba".utf8)

    @Test func whitespaceAnywhereIsSkipped() {
        #expect(Base64.decode("Zm9v\nYmFy".utf8) == foobar)
        #expect(Base64.decode("Zm9v\r\nYmE=\r\n".utf8) == fooba)
        #expect(Base64.decode(" Zm9v\tYmFy ".utf8) == foobar)
        #expect(Base64.decode("".utf8) == [])
        #expect(Base64.decode(" \n".utf8) == [])
    }

    @Test func paddingIsOptionalAndIgnoredInside() {
        #expect(Base64.decode("Zm9vYmE".utf8) == fooba)
        #expect(Base64.decode("Zm9vYg".utf8) == Array("foob".utf8))
        #expect(Base64.decode("Zm9v=YmFy".utf8) == foobar)
        #expect(Base64.decode("Zm9vYmE==".utf8) == fooba)
        #expect(Base64.decode("====".utf8) == [])
    }

    @Test func aLoneLastCharacterIsDroppedNotFatal() {
        #expect(Base64.decode("Zm9vY".utf8) == Array("foo".utf8))
        #expect(Base64.decode("Z".utf8) == [])
        #expect(Base64.decode("Zm9v!".utf8) == nil)
    }

    @Test func invalidCharactersFail() {
        #expect(Base64.decode("Zm9v!mFy".utf8) == nil)
        #expect(Base64.decode("Zm9-YmFy".utf8) == nil) // base64url is not what SSH files hold
        #expect(Base64.decode("Zm9_YmFy".utf8) == nil)
        #expect(Base64.decode([0x5A, 0x6D, 0x39, 0xC3, 0xA9]) == nil)
    }
}
