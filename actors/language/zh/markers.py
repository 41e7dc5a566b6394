"""Chinese markers: the words that change what a sentence means (记住, 更正, 我觉得), and the shapes of
turns that say nothing about the user (寒暄, requests, wishes). Regex sources; ``actors.language.markers``
joins those of the configured packs."""

import re

from actors.language.pack import Markers

MARKERS = Markers(
    forced=re.compile(
        r"^(?:请|麻烦你?|你|帮我|一定要|务必|千万)*(?:记住|记一下|记下来|记下|记好|牢记|别忘了|不要忘了|别忘记|"
        r"帮我记一下|帮我记住|记着)了?(?:这个|这件事|这一点|一点|哦|啊|哈|喔)?\s*[:：，,。!！]?\s*"
    ),
    discourse=re.compile(r"^(?:嗯+|哦+|啊+|对了|另外|而且|还有|然后|不过|但是|所以|就是|反正|话说)[，,\s]*"),
    cessation=re.compile(r"再也不|已经不再|已经不|不再|不"),
    correction_prefix=r"^(?:其实|更正一下|更正|纠正一下|纠正|说错了|我说错了|不对|搞错了|我是说|准确地说|确切地说)[，,：:\s]*",
    correction_anywhere=r"其实|更正|纠正|说错了|不是[^，,。]{1,15}?[，,]?\s*(?:而)?是|搬家了|搬到|搬去|改成",
    hedge=r"我觉得|我感觉|可能|好像|也许|大概|或许|似乎|应该是|不太确定|不确定|估计|说不定",
    hedge_prefix=r"^(?:我觉得|我感觉|我估计|可能|好像|也许|大概|或许)[，,\s]*",
    small_talk=(
        r"^(?:(?:你好|您好|嗨|哈+|呵+|嘿+|谢谢|多谢|感谢|好的|好|嗯+|哦+|噢|喔|行|可以|拜拜|再见|早上好|早安|晚安|"
        r"午安|收到|明白|了解|没问题|对|是的|不客气|在吗|ok+)[啊呀哦吧了呢啦嘛！!。.~～，,\s]*)+$"
    ),
    first_person=r"我|咱",
    request=r"^(?:帮我|请|给我|你|麻烦|能不能|可以|能否|能帮|替我|告诉我|推荐)",
    wish=r"^(?:保重|祝你|祝您|加油|玩得开心|生日快乐|新年快乐)",
    past=r"昨天|上周|上个月|刚才|之前|去年|前几天|前天|刚刚|[了过]",
    #: characters of the words that only name a secret ("银行卡号是…")
    secret_labels=frozenset("密码银行卡号手机电话身份证账户新信用验口令"),
    emphasis=r"非常|特别|太|超级|超|极其|绝对|一定|千万|最|讨厌|受不了|烦死|死了|严重|必须",
    task=r"截止|会议|开会|考试|面试|项目|任务|报告|汇报|预约|航班|出差|明天|后天|下周|月底|之前交",
    past_question=r"什么时候|啥时候|哪天|上次|上回|以前|之前|曾经|去年|前年|当时|那时|过吗|了吗",
    slot_hints=(
        ("basic.residence", r"住|搬|定居"),
        ("basic.allergy", r"过敏"),
        ("basic.name", r"名字|我叫"),
        ("basic.occupation", r"职业|是一名"),
        ("basic.employer", r"公司|上班"),
        ("basic.hometown", r"老家|家乡|来自"),
    ),
    slot_cues=(
        (
            ("吃", "做饭", "菜", "餐", "饭", "夜宵", "食物", "过敏", "点外卖"),
            ("basic.allergy", "basic.diet_restriction", "preference.food"),
        ),
        (("喝", "咖啡", "茶"), ("preference.drink", "basic.allergy")),
        (("住", "搬", "城市", "地址"), ("basic.residence",)),
        (("名字", "叫"), ("basic.name",)),
        (("工作", "职业", "公司"), ("basic.occupation", "basic.employer")),
        (("宠物", "狗", "猫"), ("basic.pet",)),
        (("家人", "老婆", "老公", "孩子", "女儿", "儿子", "妈妈", "爸爸"), ("basic.family",)),
        (("推荐", "建议"), ("preference.content", "style.taboo")),
        (("回答", "回复"), ("style.reply_length", "style.tone", "style.language")),
        (("健康", "药", "医生"), ("basic.health", "basic.allergy")),
    ),
)
