"""The bilingual vocabulary behind rule extraction: canonical slot values and the topic of a liked thing.

A slot value is compared across turns and languages, so "花生", "peanuts" and "Peanut" must all become
``peanut``; "杭州", "Hangzhou" and "杭州市" become ``hangzhou``. Each table line reads
``canonical: alias|alias|…``; the canonical form is an alias of itself. English words are singularised
before lookup, so only irregular plurals need listing.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_TABLES: dict[str, str] = {
    "city": """
        beijing: 北京|peking
        shanghai: 上海
        hangzhou: 杭州
        suzhou: 苏州
        shenzhen: 深圳
        guangzhou: 广州|canton
        chengdu: 成都
        chongqing: 重庆
        nanjing: 南京
        wuhan: 武汉
        xian: 西安|xi'an
        tianjin: 天津
        changsha: 长沙
        xiamen: 厦门
        qingdao: 青岛
        dalian: 大连
        ningbo: 宁波
        wuxi: 无锡
        zhengzhou: 郑州
        jinan: 济南
        hefei: 合肥
        fuzhou: 福州
        kunming: 昆明
        shenyang: 沈阳
        harbin: 哈尔滨
        changchun: 长春
        shijiazhuang: 石家庄
        taiyuan: 太原
        nanchang: 南昌
        nanning: 南宁
        guiyang: 贵阳
        lanzhou: 兰州
        urumqi: 乌鲁木齐
        lhasa: 拉萨
        haikou: 海口
        sanya: 三亚
        zhuhai: 珠海
        dongguan: 东莞
        foshan: 佛山
        hong kong: 香港|hongkong
        macau: 澳门|macao
        taipei: 台北
        new york: 纽约|new york city|nyc
        london: 伦敦
        paris: 巴黎
        tokyo: 东京
        seoul: 首尔
        singapore: 新加坡
        san francisco: 旧金山|sf
        los angeles: 洛杉矶|la
        seattle: 西雅图
        boston: 波士顿
        chicago: 芝加哥
        sydney: 悉尼
        melbourne: 墨尔本
        toronto: 多伦多
        vancouver: 温哥华
        berlin: 柏林
        stockholm: 斯德哥尔摩
    """,
    "allergen": """
        peanut: 花生|groundnut|花生酱|peanut butter
        tree nut: 坚果|树坚果|tree nut|nut
        walnut: 核桃
        almond: 杏仁
        cashew: 腰果
        milk: 牛奶|奶|cow's milk
        dairy: 乳制品|奶制品|dairy product
        lactose: 乳糖
        egg: 鸡蛋|蛋
        seafood: 海鲜
        shellfish: 贝类|shell fish|甲壳类
        shrimp: 虾|prawn|虾仁
        crab: 蟹|螃蟹
        fish: 鱼|鱼类
        wheat: 小麦
        gluten: 麸质|面筋
        soy: 大豆|黄豆|soya|soybean|豆制品
        sesame: 芝麻
        mango: 芒果
        penicillin: 青霉素
        pollen: 花粉
        dust mite: 尘螨
        cat hair: 猫毛
        latex: 乳胶
        alcohol: 酒精
        cilantro: 香菜|coriander
    """,
    "food": """
        spicy food: 辣|辣的|吃辣|麻辣|辣味|川菜|spicy|spicy dish|hot food
        sweets: 甜食|甜的|甜品|dessert|candy|sweet
        hotpot: 火锅|hot pot
        malatang: 麻辣烫
        noodle: 面条|面|拉面|ramen
        rice: 米饭|大米
        dumpling: 饺子
        sushi: 寿司
        pizza: 披萨|比萨
        burger: 汉堡|hamburger
        chocolate: 巧克力
        ice cream: 冰淇淋|雪糕
        fruit: 水果
        apple: 苹果
        banana: 香蕉
        strawberry: 草莓
        watermelon: 西瓜
        durian: 榴莲
        beef: 牛肉
        pork: 猪肉
        chicken: 鸡肉
        lamb: 羊肉|mutton
        steak: 牛排
        barbecue: 烧烤|bbq|烤肉
        vegetable: 蔬菜|veggie
        salad: 沙拉
        tofu: 豆腐
        pasta: 意大利面|意面|spaghetti
        bread: 面包
        cake: 蛋糕
        cheese: 奶酪|芝士
        japanese food: 日料|日本料理|日本菜
        cantonese food: 粤菜
        food: 美食|吃的|cuisine|dish|meal|snack|零食
    """,
    "drink": """
        coffee: 咖啡
        americano: 美式|冰美式|美式咖啡|iced americano
        latte: 拿铁
        tea: 茶|喝茶
        green tea: 绿茶
        black tea: 红茶
        milk tea: 奶茶|bubble tea|boba
        beer: 啤酒
        wine: 红酒|葡萄酒|red wine
        baijiu: 白酒
        whisky: 威士忌|whiskey
        cola: 可乐|coke
        juice: 果汁
        soy milk: 豆浆
        yogurt: 酸奶
        drink: 饮料|beverage|cocktail
    """,
    "pet": """
        cat: 猫|猫咪|小猫|kitten|kitty
        dog: 狗|小狗|狗狗|puppy|doggy
        rabbit: 兔子|兔|bunny
        hamster: 仓鼠
        parrot: 鹦鹉
        goldfish: 金鱼
        turtle: 乌龟|tortoise
        bird: 鸟|小鸟
        horse: 马
    """,
    "sport": """
        running: 跑步|run|jogging|jog
        swimming: 游泳|swim
        basketball: 篮球|打篮球
        soccer: 足球|踢足球|football
        badminton: 羽毛球
        table tennis: 乒乓球|ping pong
        tennis: 网球
        yoga: 瑜伽
        fitness: 健身|gym|workout|working out
        hiking: 爬山|登山|徒步|hike
        cycling: 骑行|骑车|bike|biking
        skiing: 滑雪|ski
        climbing: 攀岩|rock climbing
        sport: 运动|体育|exercise
    """,
    "music": """
        classical music: 古典音乐|古典|classical
        rock: 摇滚|rock music|摇滚乐
        jazz: 爵士|爵士乐
        pop music: 流行音乐|流行歌|pop
        hip hop: 说唱|嘻哈|rap
        folk music: 民谣|folk
        music: 音乐|听歌|听音乐|song|album|band|concert
    """,
    "hobby": """
        reading: 读书|看书|阅读|read
        painting: 画画|绘画|paint|drawing
        photography: 摄影|拍照
        cooking: 做饭|烹饪|下厨|cook|baking
        fishing: 钓鱼
        camping: 露营|camp
        gardening: 园艺|种花
        calligraphy: 书法
        programming: 编程|写代码|coding
        gaming: 打游戏|玩游戏|游戏|video game|game
        knitting: 织毛衣
        pottery: 陶艺|ceramics
        hobby: 爱好
    """,
    "content": """
        short video: 短视频|刷短视频|抖音|tiktok
        movie: 电影|看电影|film
        tv show: 电视剧|看剧|追剧|series|tv series|show
        anime: 动漫|动画|番剧
        novel: 小说|看小说
        podcast: 播客
        documentary: 纪录片
        news: 新闻
        sci-fi: 科幻|科幻小说|science fiction|sci-fi novel
        book: 书
        video: 视频
        article: 文章
    """,
    "travel": """
        travel: 旅游|旅行|出去玩|traveling|travelling|trip|vacation
        beach: 海边|沙滩
        mountain: 山|大山
        road trip: 自驾|自驾游
    """,
    "schedule": """
        morning: 早上|早晨|上午|早起
        night: 晚上|夜里|熬夜|evening|late night
        weekend: 周末
    """,
    "style": """
        minimalism: 极简|极简风|极简风格|minimalist|minimal
        dark color: 深色|深色系|暗色
        bright color: 亮色|浅色
    """,
    "shopping": """
        shopping: 购物|逛街|买东西
        online shopping: 网购|淘宝
    """,
    "occupation": """
        teacher: 老师|教师
        doctor: 医生|大夫|physician
        nurse: 护士
        engineer: 工程师
        software engineer: 软件工程师|software developer
        programmer: 程序员|coder
        developer: 开发|开发者|开发工程师
        designer: 设计师
        product manager: 产品经理|pm
        student: 学生
        college student: 大学生
        graduate student: 研究生|grad student
        lawyer: 律师|attorney
        accountant: 会计|会计师
        salesperson: 销售
        chef: 厨师|cook
        driver: 司机
        journalist: 记者|reporter
        writer: 作家|作者|author
        researcher: 研究员
        professor: 教授
        civil servant: 公务员
        manager: 经理
        police officer: 警察|policeman|cop
        actor: 演员
        photographer: 摄影师
        consultant: 顾问|咨询师
        counselor: 心理咨询师|咨询顾问|counsellor|therapist
        data scientist: 数据科学家
        data analyst: 数据分析师|analyst
        freelancer: 自由职业者|自由职业
        entrepreneur: 创业者|老板
        architect: 建筑师
        pharmacist: 药剂师
        scientist: 科学家
        artist: 艺术家|画家
        musician: 音乐人|音乐家
    """,
    "emotion": """
        tired: 累|好累|累死了|疲惫|心累|tiring|exhausted|exhausting|worn out|drained|draining|burned out|burnt out
        annoyed: 烦|好烦|烦死了|烦躁|annoying|irritated|irritating|a pain|grumpy|cranky
        stressed: 压力大|压力好大|压力很大|stressful|stressed out|under pressure|hard|tough|rough|a nightmare
        anxious: 焦虑|紧张|nervous|worried|scared|afraid
        sad: 难过|伤心|郁闷|失落|down|upset|depressed|depressing|blue|heartbroken|homesick
        angry: 生气|愤怒|mad|furious|pissed
        bored: 无聊|boring|a drag
        overwhelmed: 崩溃|swamped|overloaded|overwhelming
        frustrated: 沮丧|frustrating
        happy: 开心|高兴|快乐|glad
        excited: 兴奋|激动|thrilled
        sleepy: 困|好困
        busy: 忙|好忙
        lonely: 孤独|寂寞
    """,
    "family": """
        wife: 老婆|妻子|太太|媳妇
        husband: 老公|丈夫
        spouse: 爱人|配偶
        daughter: 女儿|闺女
        son: 儿子
        child: 孩子|小孩|娃|kid
        mother: 妈妈|妈|母亲|老妈|mom|mum|mommy
        father: 爸爸|爸|父亲|老爸|dad|daddy
        parent: 父母|爸妈
        brother: 哥哥|弟弟|哥|弟
        sister: 姐姐|妹妹|姐|妹
        grandmother: 奶奶|外婆|姥姥|grandma|granny
        grandfather: 爷爷|外公|姥爷|grandpa
        boyfriend: 男朋友|男友
        girlfriend: 女朋友|女友
        fiance: 未婚夫|未婚妻|fiancé|fiancée|fiancee
        partner: 伴侣
    """,
    "language": """
        english: 英语|英文
        chinese: 中文|汉语|普通话|国语|mandarin
        cantonese: 粤语|广东话
        japanese: 日语|日文
        korean: 韩语
        french: 法语
        german: 德语
        spanish: 西班牙语
    """,
    "province": """
        zhejiang: 浙江|浙江省
        jiangsu: 江苏|江苏省
        guangdong: 广东|广东省
        sichuan: 四川|四川省
        hunan: 湖南|湖南省
        hubei: 湖北|湖北省
        shandong: 山东|山东省
        henan: 河南|河南省
        hebei: 河北|河北省
        fujian: 福建|福建省
        anhui: 安徽|安徽省
        jiangxi: 江西|江西省
        yunnan: 云南|云南省
        guizhou: 贵州|贵州省
        shaanxi: 陕西|陕西省
        shanxi: 山西|山西省
        liaoning: 辽宁|辽宁省
        jilin: 吉林|吉林省
        heilongjiang: 黑龙江|黑龙江省
        guangxi: 广西
        hainan: 海南|海南省
        gansu: 甘肃|甘肃省
        inner mongolia: 内蒙古
        xinjiang: 新疆
        tibet: 西藏
        taiwan: 台湾
    """,
    "company": """
        tencent: 腾讯
        alibaba: 阿里|阿里巴巴
        baidu: 百度
        bytedance: 字节|字节跳动
        huawei: 华为
        xiaomi: 小米
        meituan: 美团
        netease: 网易
        jd: 京东
    """,
}

#: what category a liked thing belongs to decides its preference slot
_PREFERENCE_SLOT = {
    "food": "preference.food",
    "drink": "preference.drink",
    "music": "preference.music",
    "sport": "preference.sport",
    "hobby": "preference.hobby",
    "content": "preference.content",
    "travel": "preference.travel",
    "city": "preference.travel",
    "schedule": "preference.schedule",
    "style": "preference.style",
    "shopping": "preference.shopping",
}
_SLOT_PRIORITY = ("content", "music", "sport", "hobby", "drink", "food", "travel", "city", "schedule", "style",
                  "shopping")

_NOT_EDIBLE = {"penicillin", "pollen", "dust mite", "cat hair", "latex", "alcohol", "lactose", "gluten"}

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _parse_block(block: str) -> list[tuple[str, list[str]]]:
    rows = []
    for line in block.strip().splitlines():
        canonical, _, aliases = line.strip().partition(":")
        canonical = canonical.strip()
        names = [a.strip().casefold() for a in [canonical, *aliases.split("|")]]
        rows.append((canonical, [a for a in names if a]))
    return rows


#: emotion words are read only where a mood is being described: "blue" is a colour elsewhere
_EMOTIONS = {alias: canonical for canonical, aliases in _parse_block(_TABLES.pop("emotion")) for alias in aliases}


def _parse_tables() -> tuple[dict[str, str], dict[str, set[str]]]:
    alias_to_canonical: dict[str, str] = {}
    categories: dict[str, set[str]] = {}
    for category, block in _TABLES.items():
        for canonical, aliases in _parse_block(block):
            categories.setdefault(canonical, set()).add(category)
            for alias in aliases:
                # first table wins: "fish" stays an allergen, "nut" a tree nut, "cook" a hobby verb
                alias_to_canonical.setdefault(alias, canonical)
    for canonical in list(categories):
        if "allergen" in categories[canonical] and canonical not in _NOT_EDIBLE:
            categories[canonical].add("food")
    categories["alcohol"].add("drink")
    return alias_to_canonical, categories


_ALIASES, _CATEGORIES = _parse_tables()
_CJK_ALIASES = sorted((a for a in _ALIASES if CJK.search(a)), key=len, reverse=True)

_IRREGULAR = {
    "children": "child", "kids": "kid", "people": "person", "men": "man", "women": "woman", "mice": "mouse",
    "geese": "goose", "teeth": "tooth", "feet": "foot", "knives": "knife", "wives": "wife", "leaves": "leaf",
    "loaves": "loaf", "wolves": "wolf", "lives": "life", "shelves": "shelf", "halves": "half", "calves": "calf",
    "selves": "self", "thieves": "thief", "potatoes": "potato", "tomatoes": "tomato", "mangoes": "mango",
    "heroes": "hero", "echoes": "echo", "volcanoes": "volcano",
}
_KEEP_S = {
    "tennis", "chess", "news", "series", "species", "glasses", "jeans", "shorts", "pants", "clothes", "hummus",
    "asparagus", "couscous", "citrus", "octopus", "cactus", "lens", "bus", "gas", "yes", "this", "its", "his",
    "us", "as", "is", "was", "has", "does", "diabetes", "measles", "sweets", "lyrics", "athletics", "physics",
    "mathematics", "economics", "politics", "gymnastics", "aerobics", "analytics", "ethics", "graphics",
}
_IE_SINGULARS = {
    "cookie", "movie", "zombie", "smoothie", "brownie", "pie", "tie", "lie", "selfie", "hoodie", "veggie",
    "calorie", "rookie", "auntie", "goodie", "indie", "foodie", "genie", "prairie", "sortie", "boogie",
}


def singularize(word: str) -> str:
    w = word.casefold()
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    if len(w) <= 3 or w in _KEEP_S or not w.endswith("s") or w.endswith(("ss", "us", "is", "ics", "'s")):
        return w
    if w.endswith("ies"):
        return w[:-1] if w[:-1] in _IE_SINGULARS else w[:-3] + "y"
    if w.endswith(("ches", "shes", "xes", "zes", "sses")):
        return w[:-2]
    return w[:-1]


_LEADING_WORDS = re.compile(
    r"^(?:(?:a|an|the|some|any|my|our|your|his|her|their|this|that|these|those|all|many|much|more|most|"
    r"lots of|a lot of|a bit of|kind of|sort of|all kinds of|different|good|nice|really|very|super|"
    r"eating|drinking|playing|watching|listening to|going|doing|having|to go|to play|to eat|to drink|to watch|"
    r"to listen to|to do|to|go)\s+)+",
    re.IGNORECASE,
)
_TRAILING_WORDS = re.compile(
    r"(?:\s+(?:too|as well|a lot|so much|very much|anymore|any more|at all|lately|now|these days|sometimes|"
    r"though|ever|again|either|really|here|there))+$",
    re.IGNORECASE,
)
_ZH_LEADING = re.compile(r"^(?:我们的|我的|我|一条|一个|一些|两只|两个|三只|几只|只|条|吃|喝|看|听|玩|打|踢|去|做|用|刷|"
                         r"各种|所有的|所有|很多|特别|非常|有点|比较)+")
_ZH_TRAILING = re.compile(r"(?:的|了|啊|呀|哦|呢|吧|嘛|啦|之类的|什么的|等等|等|这些|那些|这种|那种)+$")
_EDGE_PUNCT = " \t\n\"'“”‘’`.,;:!?()[]{}<>，。；：！？、（）《》「」…~～-_*"


def clean_phrase(raw: str) -> str:
    """Casefolded, width-normalised, edge-trimmed; determiners, gerund verbs and filler adverbs dropped."""
    text = unicodedata.normalize("NFKC", raw).casefold().strip(_EDGE_PUNCT)
    text = " ".join(text.split())
    for _ in range(2):
        text = _TRAILING_WORDS.sub("", _LEADING_WORDS.sub("", text)).strip(_EDGE_PUNCT)
        text = _ZH_TRAILING.sub("", _ZH_LEADING.sub("", text)).strip(_EDGE_PUNCT)
    return text


@lru_cache(maxsize=4096)
def normalize_value(raw: str) -> str:
    """The canonical slot value of a phrase: "Peanuts" → "peanut", "花生" → "peanut", "杭州市" → "hangzhou"."""
    text = clean_phrase(raw)
    if not text:
        return ""
    if text in _ALIASES:
        return _ALIASES[text]
    words = text.split(" ")
    singular = " ".join([*words[:-1], singularize(words[-1])])
    if singular in _ALIASES:
        return _ALIASES[singular]
    stripped = re.sub(r"(?:市|省|区|县)$", "", text)
    if stripped in _ALIASES:
        return _ALIASES[stripped]
    return singular


def canonical_place(raw: str) -> str:
    """A residence or hometown value: a known city when the phrase starts with one ("杭州西湖区" → hangzhou)."""
    value = normalize_value(raw)
    if is_place(value) or not CJK.search(value):
        return value
    # the first city named wins ("浙江杭州" → hangzhou, "上海南京路" → shanghai); a province only if no city
    cities = [(value.find(a), a) for a in _CJK_ALIASES if a in value and is_city(_ALIASES[a])]
    if cities:
        return _ALIASES[min(cities)[1]]
    for alias in _CJK_ALIASES:
        if value.startswith(alias) and is_place(_ALIASES[alias]):
            return _ALIASES[alias]
    return value


def categories_of(value: str) -> frozenset[str]:
    return frozenset(_CATEGORIES.get(value, ()))


def is_allergen(value: str) -> bool:
    return "allergen" in categories_of(value)


def is_city(value: str) -> bool:
    return "city" in categories_of(value)


def is_place(value: str) -> bool:
    return bool(categories_of(value) & {"city", "province"})


def _phrase_categories(value: str) -> set[str]:
    found = set(categories_of(value))
    if found:
        return found
    for word in re.split(r"[\s-]+", value):
        found |= categories_of(normalize_value(word))
    if CJK.search(value):
        for alias in _CJK_ALIASES:
            if len(alias) > 1 and alias in value:
                found |= categories_of(_ALIASES[alias])
    return found


def preference_slot(value: str) -> str:
    """Which ``preference.*`` slot a liked or rejected thing belongs to; ``preference.general`` if unknown."""
    found = _phrase_categories(value)
    for category in _SLOT_PRIORITY:
        if category in found:
            return _PREFERENCE_SLOT[category]
    return "preference.general"


def emotion_of(word: str) -> str | None:
    """The canonical mood a word describes ("exhausting" → tired, 烦死了 → annoyed), or None."""
    phrase = unicodedata.normalize("NFKC", word).casefold().strip(_EDGE_PUNCT)
    return _EMOTIONS.get(phrase) or _EMOTIONS.get(clean_phrase(word))


def family_role(word: str) -> str | None:
    value = normalize_value(word)
    return value if "family" in categories_of(value) else None


def occupation_of(phrase: str) -> str | None:
    """A known occupation, found by the phrase's head: its last English word ("senior software engineer"), or
    the longest Chinese occupation it ends with ("在杭州工作的程序员" → programmer); else None."""
    value = normalize_value(phrase)
    if "occupation" in categories_of(value):
        return value
    if CJK.search(value):
        for alias in _CJK_ALIASES:
            if value.endswith(alias) and "occupation" in categories_of(_ALIASES[alias]):
                return _ALIASES[alias]
        return None
    head = value.split(" ")[-1] if value else ""
    if "occupation" in categories_of(normalize_value(head)):
        return value
    return None
