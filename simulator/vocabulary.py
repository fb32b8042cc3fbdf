"""The simulator's vocabulary: special tokens, the 256 bytes, common English pieces and numbers."""

from __future__ import annotations

SPECIAL_TOKENS: tuple[str, ...] = ("<s>", "</s>", "<unk>")

_WORDS = tuple(
    """
the of and to a in is it you that he was for on are with as i his they be at one have this
from or had by hot word but what some we can out other were all there when up use your how said
an each she which do their time if will way about many then them write would like so these her
long make thing see him two has look more day could go come did number sound no most people my
over know water than call first who may down side been now find any new work part take get place
made live where after back little only round man year came show every good me give our under name
very through just form sentence great think say help low line differ turn cause much mean before
move right boy old too same tell does set three want air well also play small end put home read
hand port large spell add even land here must big high such follow act why ask men change went
light kind off need house picture try us again animal point mother world near build self earth
father head stand own page should country found answer school grow study still learn plant cover
food sun four between state keep eye never last let thought city tree cross farm hard start might
story saw far sea draw left late run while press close night real life few north open seem
together next white children begin got walk example ease paper group always music those both mark
often letter until mile river car feet care second book carry took science eat room friend began
idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
usual young ready above ever red list though feel talk bird soon body dog family direct pose leave
song measure door product black short numeral class wind question happen complete ship area half
rock order fire south problem piece told knew pass since top whole king space heard best hour
better true during hundred five remember step early hold west ground interest reach fast verb sing
listen six table travel less morning ten simple several vowel toward war lay against pattern slow
center love person money serve appear road map rain rule govern pull cold notice voice unit power
town fine certain fly fall lead cry dark machine note wait plan figure star box noun field rest
correct able pound done beauty drive stood contain front teach week final gave green oh quick
develop ocean warm free minute strong special mind behind clear tail produce fact street inch
multiply nothing course stay wheel full force blue object decide surface deep moon island foot
system busy test record boat common gold possible plane stead dry wonder laugh thousand ago ran
check game shape equate miss brought heat snow tire bring yes distant fill east paint language
among fox lazy jumps brown cap limit limited liability indemnity contract agreement clause party
parties fees fee months month days annual total amount payment term terms notice period cost costs
price policy law legal claim claims damages loss losses service services customer provider data
report risk rate value market share company business account tax income interest capital revenue
profit cash bank loan credit debt fund equity asset assets year years percent per cent
hello yes no maybe true false none null ok thanks please sorry answer answers result results
user assistant system tool developer
""".split()
)

_CAPITALISED = tuple(
    """
the there this that these those it he she they we you i what when where why how which who yes no
hello thanks please answer question note in on at for if as an a one two three
""".split()
)

_PIECES = tuple(
    """
er is an at en in on re es ed ing ion ly al ar or le st th he nd ou it ent ter ere ver ation tion
ness ment able ful less est ers ies ity ous ive ize ise ck ll llo He Th ch sh qu ph wh ck ght
""".split()
)

_PUNCTUATION: tuple[str, ...] = (
    ".",
    ",",
    "!",
    "?",
    ":",
    ";",
    "'s",
    "'t",
    "'re",
    "'ve",
    "'m",
    "'ll",
    "'d",
    " (",
    ")",
    " -",
    ' "',
    '"',
    "...",
    ".\n",
    "\n\n",
    " $",
    "%",
)


def gpt2_byte_to_unicode() -> dict[int, str]:
    """GPT-2's reversible byte -> printable character map (space is 'Ġ', newline 'Ċ')."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def byte_tokens_in_id_order() -> list[int]:
    """The 256 byte values ordered as a byte-level BPE alphabet (by mapped character)."""
    mapping = gpt2_byte_to_unicode()
    return sorted(range(256), key=lambda b: mapping[b])


def merged_tokens() -> list[str]:
    """Multi-byte tokens after the byte alphabet, without duplicates, in a stable order."""
    candidates: list[str] = []
    candidates.extend(_PIECES)
    for word in _WORDS:
        candidates.extend((word, " " + word))
    for word in _CAPITALISED:
        cap = word[:1].upper() + word[1:]
        candidates.extend((cap, " " + cap))
    candidates.extend(_PUNCTUATION)
    for number in range(1000):
        candidates.extend((str(number), f" {number}"))
    seen: set[str] = set()
    ordered: list[str] = []
    for token in candidates:
        if len(token.encode("utf-8")) > 1 and token not in seen:
            seen.add(token)
            ordered.append(token)
    return ordered


def space_words() -> list[str]:
    """Tokens the pseudo-text model mostly draws from: common words with a leading space."""
    return [" " + word for word in _WORDS]
