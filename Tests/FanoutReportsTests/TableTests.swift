import FanoutCore
import FanoutReports
import Testing

struct TableTests {
    @Test func columnsAlignWithNumbersOnTheRight() {
        let table = Table(title: "Classes", headers: ["class", "tests"], rows: [["A", "12"], ["LongerName", "3"]],
                          numeric: [1])
        #expect(table.rendered() == """
            Classes
            class       tests
            ----------  -----
            A              12
            LongerName      3
            """)
    }

    @Test func anEmptyTableSaysSo() {
        #expect(Table(title: "T", headers: ["a"], rows: []).rendered() == "T\na\n-\n(none)")
    }

    @Test func wideCharactersTakeTwoColumns() {
        let lines = Table(title: "T", headers: ["name", "n"], rows: [["测试", "1"], ["ab", "2"]]).rendered()
            .split(separator: "\n")
        #expect(lines[3] == "测试  1")
        #expect(lines[4] == "ab    2")
    }
}
