import ListJSON
import ListMerge
import ListDiffTestSupport
import Testing

/// The three-way content merge of merge rule 4, on its own.
@Suite(.heavyWork) struct ContentMergeTests {
    @Test func aSideThatDidNotChangeYields() {
        #expect(ContentMerge(base: 1, mine: 2, theirs: 1) == ContentMerge(value: 2))
        #expect(ContentMerge(base: 1, mine: 1, theirs: 3) == ContentMerge(value: 3))
        #expect(ContentMerge(base: 1, mine: 4, theirs: 4) == ContentMerge(value: 4))
    }

    @Test func objectsMergeKeyByKeyAndReportOnlyTheKeysBothChangedDifferently() {
        let merge = ContentMerge(
            base: ["a": 1, "b": 1, "c": 1, "d": 1],
            mine: ["a": 2, "b": 2, "c": 1, "d": 1, "m": true],
            theirs: ["a": 1, "b": 3, "c": 3, "t": false, "z": 0])
        #expect(merge.value == ["a": 2, "b": 2, "c": 3, "m": true, "t": false, "z": 0])
        #expect(merge.clashes == [ContentMerge.Clash(key: "b", mine: 2, theirs: 3)])
    }

    @Test func aKeyOneSideRemovedAndTheOtherChangedIsAClash() {
        let merge = ContentMerge(base: ["a": 1], mine: ["a": 2], theirs: JSONValue.object(JSONObject()))
        #expect(merge.value == ["a": 2])
        #expect(merge.clashes == [ContentMerge.Clash(key: "a", mine: 2, theirs: nil)])
    }

    @Test func withoutABaseObjectsMergeAsIfTheBaseWereEmpty() {
        let merge = ContentMerge(base: nil, mine: ["a": 1, "k": 1], theirs: ["b": 1, "k": 2])
        #expect(merge.value == ["a": 1, "b": 1, "k": 1])
        #expect(merge.clashes == [ContentMerge.Clash(key: "k", mine: 1, theirs: 2)])
        #expect(ContentMerge(base: nil, mine: 1, theirs: 1) == ContentMerge(value: 1))
        #expect(ContentMerge(base: nil, mine: 1, theirs: 2).clashes == [ContentMerge.Clash(key: nil, mine: 1, theirs: 2)])
    }

    @Test func anythingElseTakesMineWhole() {
        #expect(ContentMerge(base: [1], mine: [2], theirs: [3]).value == [2])
        #expect(ContentMerge(base: .null, mine: ["a": 1], theirs: ["a": 2]).clashes == [
            ContentMerge.Clash(key: nil, mine: ["a": 1], theirs: ["a": 2]),
        ])
    }
}

extension ContentMerge {
    /// A merge that kept `value` without clashes.
    init(value: JSONValue) {
        self.init(base: value, mine: value, theirs: value)
    }
}
