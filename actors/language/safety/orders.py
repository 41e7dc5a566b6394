"""Orders to the assistant: a clause that tells the assistant what to do is an instruction, not a memory
(docs/trust.md#3-hostile-input).

A memory is what the user says of themselves and their world. A clause whose actor is the assistant is an
instruction, whatever it asks: its subject is "you" with a modal or an order ("you must …", 你以后要…), or
it is in the imperative (an order verb first, after courtesy and time framings: "always end with …",
请在末尾加上…), or it frames the assistant's replies ("when you answer …", "in every reply", 回答的时候,
每次回复, 末尾都加上), or it sends the reader to an address ("visit cheap-pills.example"). Such a clause is
never stored as words: only a slot finding of it is kept, rendered by the service's template (a style
instruction in the closed vocabulary of ``actors.core.style``, "call me Sam", "don't recommend horror").
The test is grammatical (who acts), not a list of attack phrasings.
"""

from __future__ import annotations

import re
import unicodedata

from actors.language.safety.invisible import strip_invisible
from actors.language.text import has_han

_EN_FRAMING = re.compile(
    r"^(?:(?:please|pls|plz|kindly|also|and|but|so|ok(?:ay)?|hey|hi|now|just|oh|then|alright|actually|"
    r"to be (?:honest|precise|fair|clear|exact|frank|sure)|to|"
    r"always|never|ever|from now on|from here on(?: out)?|going forward|henceforth|hereafter|"
    r"in (?:the )?future|"
    r"for (?:all )?(?:the )?(?:future|rest of (?:our|this|the) (?:chats?|conversations?|sessions?))(?: \w+)?|"
    r"next time|each time|every time|at all times|no matter what|whatever happens|without exception|"
    r"(?:each|every|any) time you \w+(?: \w+){0,3}?(?=,| you\b| \w+ (?:with|by|in)\b)|"
    r"when(?:ever)? (?:you|u) (?:reply|answer|respond|write|talk|speak|chat|help|get back|message|text|"
    r"answer questions|explain)(?: to me| me| back)?|"
    r"(?:in|for|with|at the (?:end|start|beginning|top|bottom) of) (?:every|each|all|any|your|the) "
    r"(?:\w+ ){0,2}?(?:answers?|repl(?:y|ies)|responses?|messages?|outputs?|texts?|emails?|chats?|turns?)|"
    r"(?:as|like) (?:a|my) (?:rule|standing (?:order|instruction)|habit)|"
    r"(?:by the way|btw|fyi|note|important|reminder|p\.?s\.?)[:,]?)[\s,:;.!-]*)+",
    re.IGNORECASE,
)
#: the assistant as the one who must act
_EN_YOU_ACT = re.compile(
    r"^(?:you|u|ya|the assistant|assistant|the ai|the bot|the model)\s+(?:must|should|shall|will|'ll|"
    r"need to|needs to|have to|has to|gotta|are to|are going to|'re going to|ought to|are required to|"
    r"can now|may now|are now|'re now|now|always|never|better|had better|'d better|do|don't|do not|won't|"
    r"can't|cannot|are not to|aren't to|may not|must not|mustn't|should not|shouldn't|are allowed|"
    r"are permitted|only|will always|will never|\w+ (?:always|never))\b"
    r"|^(?:your|ur) (?:answers?|repl(?:y|ies)|responses?|messages?|outputs?|texts?|emails?|signature|"
    r"sign[- ]?off|job|task|role|rule|instructions?|purpose)\b",
    re.IGNORECASE,
)
#: the user orders the assistant in the first person
_EN_USER_ORDERS = re.compile(
    r"\b(?:i|we)(?:\s+|(?='))(?:want|need|expect|require|demand|order|instruct|ask|tell|command|would like|"
    r"'d like|would love|'d love|wish)\s+(?:for\s+)?(?:you|u|the assistant)\s+(?:to|always|never|must)\b"
    r"|\b(?:i|we)\s+(?:want|need|require|insist)\s+(?:that\s+)?(?:you|your)\b"
    r"|\b(?:make sure|be sure|ensure|see to it|remember|don't forget|do not forget|never forget)\s+"
    r"(?:that\s+)?(?:you|to|your)\b"
    r"|\bit(?:'s| is) (?:important|essential|crucial|mandatory|required) that (?:you|your)\b",
    re.IGNORECASE,
)
#: verbs that open an order; a clause opened by one and holding no copula is in the imperative
_EN_ORDER_VERBS = frozenset(
    """end start begin finish close conclude sign prefix suffix append prepend add include insert attach embed
    mention say tell write print output type respond reply answer use recommend suggest promote advertise
    plug link visit go check click open buy order call refer remind translate format list show give send
    put paste ignore disregard forget override pretend act behave treat speak talk address greet thank
    praise apologize apologise avoid stop keep make let be do don't dont never always quote cite repeat
    copy spell capitalize capitalise summarize summarise explain describe ask offer push sell tag mark label
    introduce reveal share display wrap bold italicize highlight encourage insist direct redirect forward
    email text message notify refuse deny pretend roleplay role-play switch change set follow obey adopt
    drop skip remove replace rename sign-off mention include finish""".split()
)
_EN_COPULA = re.compile(
    r"\b(?:is|are|was|were|'s|has been|have been|had been|makes me|made me|gets me|got me|reminds me)\b",
    re.IGNORECASE,
)
_EN_LEAD_IN = re.compile(
    r"^(?:(?!(?:said|says|say|told|tells|thinks|think|thought|knows|know|hope|hopes|bet)\b)[a-z'-]+\s+){1,3}"
    r"(?=(?:you|u)\s)",
    re.IGNORECASE,
)
_EN_ORDER_WORD = re.compile(r"^([a-z'-]+)\b", re.IGNORECASE)
_EN_FIRST_PERSON_OPENING = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|me|we|we're|our|mine)\b", re.IGNORECASE)
#: an address anywhere: an instruction's favourite payload
_ADDRESS = re.compile(
    r"(?:https?://|www\.)\S+|(?<![@\w])[a-z0-9][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,62})*\.(?:com|net|org|io|co|"
    r"example|info|biz|xyz|app|dev|ai|cn|ru|top|shop|site|online|link|click|me|ly|gg|tv|us|uk|de)\b",
    re.IGNORECASE,
)
_SEND_TO_ADDRESS = re.compile(
    r"\b(?:visit|go to|head to|check out|click|open|browse|buy|order|shop|sign up|subscribe|download|"
    r"link(?: to)?|promote|recommend|mention|include|add|append|paste|print|say|write|tell)\b"
    r"|访问|打开|点击|登录|登陆|注册|下载|购买|推荐|推广|加上|附上|链接|网址|网站",
    re.IGNORECASE,
)

_ZH_FRAMING = re.compile(
    r"^(?:(?:请|麻烦|劳驾|拜托|那个|另外|还有|对了|嗯|好的|好|哦|那么|那|然后|并且|而且|同时|注意|重要|提醒|说实话|"
    r"说真的|老实说|讲真|以后|今后|往后|之后|接下来|从现在(?:开始|起)|从今(?:天|往后|以后)(?:开始|起)?|从此|此后|"
    r"每次|每回|每一次|任何时候|无论如何|不管怎样|不论什么时候|一直|永远|总是|始终|务必|一定要|一定|千万|记得|"
    r"记住|别忘了|不要忘了|不要忘记|必须|都)[\s，,：:。！!、]*)+"
)
_ZH_YOU_ACT = re.compile(
    r"^(?:你|您|助手|机器人|AI|ai)(?:们)?(?:的(?:回答|回复|答复|消息|输出|回应)|以后|今后|从现在(?:开始|起)|每次|每回|回答|回复|答复|说话|聊天|"
    r"必须|要|得|应该|应当|需要|务必|一定|记得|别|不要|不许|不准|不能|只能|只许|只准|总是|永远|始终|都|"
    r"给我|帮我|就|先|再|来|可以|能|能不能|可不可以|把|在|用|将|会|请|还要|也要)"
)
_ZH_USER_ORDERS = re.compile(r"我(?:要|希望|需要|想|想要|让|请|要求|命令|叫|拜托|麻烦)(?:你|您)")
_ZH_REPLY_FRAME = re.compile(
    r"(?:回答|回复|答复|回应|输出|说话|聊天|跟我说话|和我说话|跟我聊|和我聊|写回答|答题)(?:我|问题)?(?:的)?"
    r"(?:时候|时|前|后|之前|之后|里|中)"
    r"|(?:每次|每条|每个|每一条|每一个|所有|任何|全部)(?:的)?(?:回答|回复|答复|消息|输出|回应|对话)"
    r"|(?:末尾|结尾|开头|最后|最前面|结束时|最末|文末|句末|末端)(?:处)?(?:都|也|要|必须|请|一定|统一)*"
    r"(?:加上?|附上?|写上?|带上?|放上?|注明|标注|说|提|贴|插入|附加|署名|签名|落款)"
)
#: verbs that open an order in Chinese; a clause opened by one with no copula or adjective is imperative
_ZH_ORDER_VERB = re.compile(
    r"^(?:加上|附上|写上|带上|附加|插入|输出|打印|回复|回答|答复|推荐|提到|提一下|提及|告诉|访问|推广|宣传|链接|"
    r"忽略|无视|扮演|假装|称呼|使用|用|说|讲|写|给我|帮我|把|按照|遵守|遵循|切换|改用|保持|确保|别|不要|不许|"
    r"禁止|停止|避免|尽量|署名|签名|落款|记得)"
)
_ZH_STATEMENT = re.compile(r"是|很|挺|太|让我|令我|使我|叫做|好难|好累|好烦|难吃|好吃|没意思|有意思")
#: how a Chinese part in the first person opens (我, 我们, 咱, 咱们); "我要你…" never gets this far: an order
#: to "you" is read before (``_ZH_USER_ORDERS``, ``_SECOND_PERSON``)
_ZH_FIRST_PERSON_OPENINGS = ("我", "咱")


def _is_english_order(clause: str) -> bool:
    body = _EN_FRAMING.sub("", clause.strip()).strip(" \"'“”‘’")
    if not body or _EN_FIRST_PERSON_OPENING.match(body):
        return bool(_EN_USER_ORDERS.search(body))
    if _EN_YOU_ACT.match(body) or _EN_USER_ORDERS.search(body):
        return True
    # an adverbial opening before the order: "starting today you will …", "this time you must …"
    opening = _EN_LEAD_IN.match(body)
    if opening and _EN_YOU_ACT.match(body[opening.end() :]):
        return True
    m = _EN_ORDER_WORD.match(body)
    if m is None or m[1].casefold() not in _EN_ORDER_VERBS:
        return False
    return not _EN_COPULA.search(body)


def _is_chinese_order(clause: str) -> bool:
    text = "".join(clause.split())
    if _ZH_USER_ORDERS.search(text) or _ZH_REPLY_FRAME.search(text):
        return True
    body = _ZH_FRAMING.sub("", text)
    if not body or body.startswith(_ZH_FIRST_PERSON_OPENINGS):
        return False
    if _ZH_YOU_ACT.match(body):
        return True
    return bool(_ZH_ORDER_VERB.match(body)) and not _ZH_STATEMENT.search(body)


_PARTS = re.compile(
    r"\s*(?:[,;:]|\s-\s|\b(?:and|but|then|also|plus|so)\b|[，；：、]|然后|并且|而且|还有|另外|但是)\s*", re.I
)
_SECOND_PERSON = re.compile(r"\b(?:you|your|u|ur)\b|你|您", re.IGNORECASE)


def _is_order(part: str) -> bool:
    han, latin = has_han(part), any(ch.isascii() and ch.isalpha() for ch in part)
    return (han and _is_chinese_order(part)) or (latin and _is_english_order(part))


def _joined(folded: str) -> list[tuple[str, str]]:
    """The text's parts between its joints, each with the joint before it ("" for the first), casefolded
    and stripped ("," "and" "so" …); a joint right after another is added to it."""
    parts: list[tuple[str, str]] = []
    start, joint = 0, ""
    for found in _PARTS.finditer(folded):
        part = folded[start : found.start()]
        if part.strip():
            parts.append((part, joint))
            joint = ""
        joint = f"{joint} {found.group().strip().casefold()}".strip()
        start = found.end()
    if folded[start:].strip():
        parts.append((folded[start:], joint))
    return parts


#: the joints after which a bare verb goes on with the subject of the part before ("we roast marshmallows,
#: tell stories …", "I made something to catch the eye and make people smile")
_LIST_JOINTS = frozenset({",", "and", ", and"})
#: what an assistant's output is called: a clause naming one narrates nothing
_OUTPUT_WORDS = frozenset(
    """answer answers reply replies response responses message messages output outputs email emails
    signature sign-off prompt prompts""".split()
)


def _words(text: str) -> set[str]:
    return {word.strip(".,!?;:\"'“”‘’()") for word in text.casefold().split()}


def _narrated(part: str, joint: str, previous_narrates: bool) -> bool:
    """Whether a part read as a bare order (an English verb opening it) goes on with a first-person narration
    before it (``previous_narrates``), sharing its subject: after a list joint, and no order of a stronger
    kind (``_EN_YOU_ACT``, ``_EN_USER_ORDERS``)."""
    if not previous_narrates or joint not in _LIST_JOINTS or has_han(part):
        return False
    body = _EN_FRAMING.sub("", part.strip()).strip(" \"'“”‘’")
    return body != "" and not (_EN_YOU_ACT.match(body) or _EN_USER_ORDERS.search(body))


def order_parts(clause: str) -> list[tuple[str, bool]]:
    """The clause cut at its joints (commas, "and", "then", 然后 …), each part with whether it is addressed
    to the assistant. Once one part is, so are its framings ("when you reply", 以后) and any part that
    speaks to "you" — "I love opera and always end your replies with …" is a fact and an order. In a clause
    that speaks to no "you" and names no assistant's output, a bare verb that goes on with a first-person
    narration ("we roast marshmallows, tell stories around the campfire") is no order: its subject is the
    narrator (``_narrated``)."""
    folded = unicodedata.normalize("NFKC", strip_invisible(clause)).replace("’", "'")
    joined = _joined(folded)
    parts = [p for p, _ in joined]
    if _ADDRESS.search(folded) and _SEND_TO_ADDRESS.search(folded):
        return [(p, True) for p in parts]
    # a clause that speaks to "you" or names an assistant's output anywhere narrates nothing
    narrates = False
    can_narrate = not _SECOND_PERSON.search(folded) and not _OUTPUT_WORDS & _words(folded)
    orders: list[bool] = []
    for part, joint in joined:
        order = _is_order(part) and not (can_narrate and _narrated(part, joint, narrates))
        narrates = not order and (_of_the_user(part) or (narrates and joint in _LIST_JOINTS))
        orders.append(order)
    if not any(orders):
        return [(p, False) for p in parts]
    return [(p, order or not _of_the_user(p)) for p, order in zip(parts, orders, strict=True)]


def _of_the_user(part: str) -> bool:
    """A part of an order that still says something of the user: opened in the first person (after
    courtesy), not speaking to "you" ("I love jazz" in "I love jazz and add … to your replies")."""
    if _SECOND_PERSON.search(part):
        return False
    english = _EN_FRAMING.sub("", part).strip(" \"'“”‘’")
    chinese = _ZH_FRAMING.sub("", "".join(part.split()))
    return bool(_EN_FIRST_PERSON_OPENING.match(english) or chinese.startswith(_ZH_FIRST_PERSON_OPENINGS))


def addressed_to_assistant(clause: str) -> bool:
    """Whether a clause tells the assistant what to do (an instruction) rather than saying something of
    the user or their world (a memory), in any of its parts. Read in both languages: a part with a Han
    ideograph by the Chinese grammar, one with Latin words by the English one (a mixed part by both)."""
    return any(order for _, order in order_parts(clause))


_PLAIN_VALUE = re.compile(r"^[^\W\d_]+(?:[ :'-][^\W\d_]+){0,5}$")


def plain_value(value: str | None) -> bool:
    """Whether the slot value of an order may be kept in the service's template: a plain phrase of words
    (``horror film``, ``dog:max``, 海鲜), no digits, no address, no markup, at most six words."""
    return value is not None and bool(_PLAIN_VALUE.match(value)) and not _ADDRESS.search(value)
